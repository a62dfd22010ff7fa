/**
 * The masonry grid's layout: notes in their order, each placed in the shortest column so far,
 * so the first notes fill the top row left to right as in Keep. Heights are estimated from the
 * text (a card's height follows its lines), which keeps the layout a pure function.
 */
import type { LocalNote } from '../sync/index.js';

/** Keep's card width, in CSS pixels, and the gap between cards. */
const CARD_WIDTH = 240;
const CARD_GAP = 16;
const CHARS_PER_LINE = 28;
const MAX_LINES = 18;

/** Below this width (a phone) two narrower columns, as Keep's app shows. */
const NARROW = 600;

export function columnCount(width: number): number {
  if (width < NARROW) return 2;
  return Math.max(1, Math.floor((width + CARD_GAP) / (CARD_WIDTH + CARD_GAP)));
}

/** About how many lines the card shows: title, text lines (wrapped, capped) and chips. */
export function estimatedLines(note: LocalNote): number {
  let lines = note.title ? 2 : 0;
  for (const line of note.content.split('\n', MAX_LINES))
    lines += Math.max(1, Math.ceil(line.length / CHARS_PER_LINE));
  return Math.min(lines, MAX_LINES) + (note.attachments.length > 0 ? 8 : 0) + 2;
}

export function masonryColumns<T>(items: readonly T[], columns: number, height: (item: T) => number): T[][] {
  const result: T[][] = Array.from({ length: columns }, () => []);
  const heights = new Array<number>(columns).fill(0);
  for (const item of items) {
    let shortest = 0;
    for (let column = 1; column < columns; column++)
      if (heights[column]! < heights[shortest]!) shortest = column;
    result[shortest]!.push(item);
    heights[shortest]! += height(item);
  }
  return result;
}
