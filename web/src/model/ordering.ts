/**
 * The order notes are shown in, and the sortOrder new and moved notes get (docs/api.md: pinned
 * first, then sortOrder ascending, then the most recently updated, then id; decision 0013).
 */
import type { LocalNote } from '../sync/index.js';

/** New notes go on top: this far below the smallest sortOrder, so later moves find room between. */
export const SORT_ORDER_STEP = 1024;

export function compareNotes(a: LocalNote, b: LocalNote): number {
  if (a.pinned !== b.pinned) return a.pinned ? -1 : 1;
  if (a.sortOrder !== b.sortOrder) return a.sortOrder - b.sortOrder;
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  // The same order on every device and in the local database's index (sync/database.ts).
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The sortOrder of a new note: above every note shown. */
export function sortOrderOnTop(notes: Iterable<LocalNote>): number {
  let min = Number.POSITIVE_INFINITY;
  for (const note of notes) min = Math.min(min, note.sortOrder);
  return Number.isFinite(min) ? min - SORT_ORDER_STEP : 0;
}

/**
 * The sortOrders that put `moved` at index `to` of `section` (counted without it): one write, the
 * midpoint between its new neighbours, when there is an integer between them; otherwise (equal
 * or adjacent values, e.g. notes that all kept the default 0) the section is renumbered in steps.
 */
export function sortOrdersForMove(
  section: readonly LocalNote[],
  moved: LocalNote,
  to: number,
): Map<string, number> {
  const others = section.filter((note) => note.id !== moved.id);
  const index = Math.max(0, Math.min(to, others.length));
  const before = others[index - 1]?.sortOrder;
  const after = others[index]?.sortOrder;
  if (before === undefined && after === undefined) return new Map();
  if (before === undefined) return new Map([[moved.id, after! - SORT_ORDER_STEP]]);
  if (after === undefined) return new Map([[moved.id, before + SORT_ORDER_STEP]]);
  if (after - before >= 2) return new Map([[moved.id, Math.floor((before + after) / 2)]]);
  const order = [...others.slice(0, index), moved, ...others.slice(index)];
  const base = order[0]!.sortOrder;
  return new Map(order.map((note, i) => [note.id, base + i * SORT_ORDER_STEP]));
}
