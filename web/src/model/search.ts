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

/**
 * Letters that are not a base letter plus an accent, so NFD leaves them: folded to what people
 * type on a keyboard without them (issue 30 item 15), as accents are.
 */
const LETTERS: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  ł: 'l',
  þ: 'th',
  ı: 'i',
};
const LETTER = new RegExp(`[${Object.keys(LETTERS).join('')}]`, 'g');

export function foldText(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(LETTER, (letter) => LETTERS[letter]!);
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

/** How a search as you type finishes what its keystroke left: `later` runs `finish` after the frame. */
export interface SearchAsYouTypeOptions {
  /** Notes found before a keystroke is answered: its frame shows no more new cards (frameBudget.ts). */
  firstMatches: number;
  later: (finish: () => void) => void;
  /** Called when an answer given in part is whole: ask again for it. */
  onWhole: () => void;
}

interface Scan {
  notes: readonly LocalNote[];
  query: string;
  filters: string;
  matches: (note: LocalNote) => boolean;
  /** The notes looked through, in order; `next` is the first not looked at yet. */
  source: readonly LocalNote[];
  next: number;
  found: LocalNote[];
}

/**
 * A search as you type. Each answer is kept, and when the query only grew (the same notes and
 * filters, the folded query extending the last one) the next is looked for among the last
 * answer's notes: every word of the longer query contains a word of the shorter, or is new, so
 * it can only find fewer. A keystroke then reads the few notes still found, not 10,000.
 *
 * A keystroke's answer stops at the first `firstMatches` notes found, which is all its first
 * frame shows; the rest is looked for after that frame (`later`), and `onWhole` says when the
 * answer is whole. A query typed before then narrows what was found plus what was not yet read.
 * The notes given in part are always the first of the whole answer, in order.
 */
export function searchAsYouType({
  firstMatches,
  later,
  onWhole,
}: SearchAsYouTypeOptions): (
  notes: readonly LocalNote[],
  query: string,
  filters: SearchFilters,
) => LocalNote[] {
  let last: Scan | undefined;
  return (notes, query, filters) => {
    const folded = foldText(query);
    const filterKey = JSON.stringify(filters);
    const sameSearch = last && last.notes === notes && last.filters === filterKey;
    if (sameSearch && last!.query === folded) return last!.found;
    const source =
      sameSearch && folded.startsWith(last!.query)
        ? last!.found.concat(last!.source.slice(last!.next))
        : notes;
    const scan: Scan = {
      notes,
      query: folded,
      filters: filterKey,
      matches: noteMatcher(query, filters),
      source,
      next: 0,
      found: [],
    };
    scanFor(scan, firstMatches);
    last = scan;
    if (scan.next < source.length)
      later(() => {
        if (last !== scan) return;
        scanFor(scan, Number.POSITIVE_INFINITY);
        onWhole();
      });
    return scan.found;
  };
}

/** Reads on until `wanted` more notes are found or none is left; `found` becomes a new array. */
function scanFor(scan: Scan, wanted: number): void {
  const found = [...scan.found];
  const goal = found.length + wanted;
  const { source, matches } = scan;
  let next = scan.next;
  while (next < source.length && found.length < goal) {
    const note = source[next++]!;
    if (matches(note)) found.push(note);
  }
  scan.next = next;
  scan.found = found;
}
