/**
 * Search as you type, in memory over every note on the device: the same online and offline.
 * Case- and accent-insensitive substring match of every word of the query; each note's folded
 * text is computed once per note object (a new object comes with every change).
 */
import type { LocalNote, NoteColor } from '../sync/index.js';
import { labelsOf } from './labels.js';

export interface SearchFilters {
  lists?: boolean;
  images?: boolean;
  color?: NoteColor | null;
  label?: string | null;
}

const folded = new WeakMap<LocalNote, string>();

export function foldText(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

function searchableText(note: LocalNote): string {
  let text = folded.get(note);
  if (text === undefined) {
    text = foldText(`${note.title}\n${note.content}`);
    folded.set(note, text);
  }
  return text;
}

/**
 * Folds every note's text a slice at a time between other work, so that the first keystroke
 * does not fold 10,000 notes at once (~250 ms in Node, more on a phone). Notes already folded
 * cost a WeakMap lookup.
 */
export function prepareSearch(notes: readonly LocalNote[], slice = 500): void {
  let index = 0;
  const step = () => {
    const end = Math.min(index + slice, notes.length);
    for (; index < end; index++) searchableText(notes[index]!);
    if (index < notes.length) setTimeout(step);
  };
  setTimeout(step);
}

export function isChecklist(note: LocalNote): boolean {
  return note.checklistMode || /^\s*[-*+]\s+\[[ xX]\]/m.test(note.content);
}

export function hasFilters(filters: SearchFilters): boolean {
  return Boolean(filters.lists || filters.images || filters.color || filters.label);
}

/** A predicate for the notes the query and filters find. Trashed notes are never found. */
export function noteMatcher(query: string, filters: SearchFilters): (note: LocalNote) => boolean {
  const words = foldText(query).split(/\s+/).filter(Boolean);
  return (note) => {
    if (note.trashed) return false;
    if (filters.lists && !isChecklist(note)) return false;
    if (filters.images && note.attachments.length === 0) return false;
    if (filters.color && note.color !== filters.color) return false;
    if (filters.label && !labelsOf(note).includes(filters.label)) return false;
    if (words.length === 0) return true;
    const text = searchableText(note);
    return words.every((word) => text.includes(word));
  };
}

/**
 * A search as you type: each answer is kept, and when the query only grew (the same notes and
 * filters, the folded query extending the last one) the next is looked for among the last
 * answer's notes: every word of the longer query contains a word of the shorter, or is new, so
 * it can only find fewer. A keystroke then reads the few notes still found, not 10,000.
 */
export function searchAsYouType(): (
  notes: readonly LocalNote[],
  query: string,
  filters: SearchFilters,
) => LocalNote[] {
  let last: { notes: readonly LocalNote[]; query: string; filters: string; found: LocalNote[] } | undefined;
  return (notes, query, filters) => {
    const folded = foldText(query);
    const filterKey = JSON.stringify(filters);
    const narrowing =
      last && last.notes === notes && last.filters === filterKey && folded.startsWith(last.query);
    const found = (narrowing ? last!.found : notes).filter(noteMatcher(query, filters));
    last = { notes, query: folded, filters: filterKey, found };
    return found;
  };
}
