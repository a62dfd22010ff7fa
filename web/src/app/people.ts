/**
 * Who a note is shared with, as the UI knows it (docs/webapp.md "People and sharing"). The sync
 * protocol carries no collaborators, so the app asks GET …/collaborators for a note when it is
 * opened, when its dialog changes it, and once for each note shared with this user; the answers
 * are kept per user in localStorage so the cards show their people offline too.
 */
import { signal } from '@preact/signals';
import type { Collaborator } from '../../../src/shared/api/people.js';
import type { LocalNote } from '../sync/index.js';
import { fetchCollaborators } from './api.js';
import { engine } from './state.js';

const storageKey = () => `keepsake:people:${engine.value?.userId ?? ''}`;

function stored(): Record<string, Collaborator[]> {
  try {
    return JSON.parse(localStorage.getItem(storageKey()) ?? '{}');
  } catch {
    return {};
  }
}

/** Note id → its collaborators (the owner is not in the list: see `ownerId`). */
export const people = signal<Record<string, Collaborator[]>>(stored());

/** After a sign-in as someone else. */
export function reloadPeople(): void {
  people.value = stored();
}

/**
 * Note id → how many times its list was set. A GET sent before an add or remove can be answered
 * after it; an answer to a request older than the last change is stale and must not undo it.
 */
const changes = new Map<string, number>();

export function setPeople(noteId: string, collaborators: Collaborator[]): void {
  changes.set(noteId, (changes.get(noteId) ?? 0) + 1);
  const next = { ...people.value };
  if (collaborators.length > 0) next[noteId] = collaborators;
  else delete next[noteId];
  people.value = next;
  localStorage.setItem(storageKey(), JSON.stringify(next));
}

/** Asks the server; offline or refused (no longer shared), the last answer stays. */
export async function refreshPeople(noteId: string): Promise<Collaborator[] | null> {
  const changesBefore = changes.get(noteId) ?? 0;
  try {
    const collaborators = await fetchCollaborators(noteId);
    if ((changes.get(noteId) ?? 0) !== changesBefore) return people.value[noteId] ?? [];
    setPeople(noteId, collaborators);
    return collaborators;
  } catch {
    return null;
  }
}

export function isMine(note: Pick<LocalNote, 'ownerId'>): boolean {
  return String(note.ownerId) === engine.value?.userId;
}

/** Someone else can edit it: its owner (it is not mine) or a collaborator. */
export function isShared(note: Pick<LocalNote, 'id' | 'ownerId'>): boolean {
  return !isMine(note) || (people.value[note.id]?.length ?? 0) > 0;
}

/** Learns the people of notes shared with me that were never asked about (one at a time). */
export async function learnPeopleOfSharedNotes(notes: LocalNote[]): Promise<void> {
  for (const note of notes) {
    if (!isMine(note) && !people.value[note.id]) await refreshPeople(note.id);
  }
}

/** "Ada Lovelace" → "AL"; one name → its first letter. */
export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.length > 1 ? [words[0]!, words.at(-1)!] : words;
  return letters.map((word) => [...word][0]!.toUpperCase()).join('') || '?';
}
