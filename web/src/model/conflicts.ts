/**
 * Conflict copies (docs/sync.md D-SYNC-8): the API marks one only by its title, "<title>
 * (conflict <ISO date>)", and names the note it came from nowhere. So the note it was copied from
 * is found by that title, or, when it was the title that lost, by the unchanged content.
 */
import { diffComm } from 'node-diff3';
import type { NoteFields } from '../sync/index.js';

interface NoteLike {
  id: string;
  title: string;
  content: string;
  trashed: boolean;
  updatedAt: string;
}

const CONFLICT_SUFFIX = / \(conflict (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)\)$/;

/** The copy's own title and the time of its text, or null for a note that is not a copy. */
export function conflictMark(title: string): { title: string; at: Date } | null {
  const match = CONFLICT_SUFFIX.exec(title);
  if (!match?.[1]) return null;
  return { title: title.slice(0, match.index), at: new Date(match[1]) };
}

/** A title as shown: a conflict copy's time in the person's locale, not the API's ISO time. */
export function displayTitle(title: string): string {
  const mark = conflictMark(title);
  if (!mark) return title;
  const at = mark.at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  return `${mark.title} (conflict ${at})`;
}

/** The note a copy was made from: same title, else same content; the latest edited first. */
export function conflictOriginal<T extends NoteLike>(copy: T, notes: Iterable<T>): T | undefined {
  const mark = conflictMark(copy.title);
  if (!mark) return undefined;
  const candidates = [...notes]
    .filter((note) => note.id !== copy.id && !note.trashed && !conflictMark(note.title))
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  return (
    candidates.find((note) => note.title === mark.title) ??
    candidates.find((note) => note.content === copy.content)
  );
}

export type ConflictChoice = 'this' | 'that' | 'both';

/**
 * What "Keep this" (the copy), "Keep that" (the note) and "Keep both" write: the text not kept is
 * moved to Trash (Restore brings it back); a kept copy loses its mark and becomes a plain note.
 */
export function resolveConflict(
  choice: ConflictChoice,
  copy: NoteLike,
  original: NoteLike,
): { id: string; fields: NoteFields }[] {
  const unmarked = { id: copy.id, fields: { title: conflictMark(copy.title)?.title ?? copy.title } };
  if (choice === 'that') return [{ id: copy.id, fields: { trashed: true } }];
  if (choice === 'this') return [unmarked, { id: original.id, fields: { trashed: true } }];
  return [unmarked];
}

/** A run of words in Compare: in both texts, only in the copy (`added`) or only in the other. */
interface WordChange {
  value: string;
  added?: true;
  removed?: true;
}

/**
 * The word-by-word difference from `original` to `copy` (the longest common sequence of words
 * and the spaces between them, node-diff3's): the runs without `removed` spell the copy, the runs
 * without `added` the original.
 */
export function wordChanges(original: string, copy: string): WordChange[] {
  const words = (text: string) => text.match(/\s+|\S+/g) ?? [];
  const changes: WordChange[] = [];
  // node-diff3's types leave out the runs in common, which its diffComm does return.
  const parts = diffComm(words(original), words(copy)) as unknown as (
    | { common: string[] }
    | { buffer1: string[]; buffer2: string[] }
  )[];
  for (const part of parts) {
    if ('common' in part) changes.push({ value: part.common.join('') });
    else {
      if (part.buffer1.length > 0) changes.push({ value: part.buffer1.join(''), removed: true });
      if (part.buffer2.length > 0) changes.push({ value: part.buffer2.join(''), added: true });
    }
  }
  return changes;
}
