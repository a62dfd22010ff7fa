import { mergeLines } from '../../../src/shared/textMerge.js';

/**
 * An open note's text when a change from elsewhere arrives (issue 28): the person's unsaved
 * typing and the incoming text merged line by line against the text both started from, exactly
 * as sync merges them (D-SYNC-9). When both changed the same line differently, the typing stays
 * on screen; the push that follows then merges or makes a conflict copy as usual.
 */
export function mergeIncoming(base: string, typed: string, incoming: string): string {
  if (typed === base) return incoming;
  return mergeLines(base, typed, incoming) ?? typed;
}

/**
 * Where a caret or selection edge at `position` in `before` belongs in `after`: unchanged before
 * the changed span, shifted by the length difference after it, at the span's end inside it. The
 * changed span is what lies between the longest common prefix and suffix, so a line changed
 * elsewhere above the caret moves it with its line, one changed below leaves it alone.
 */
export function movedPosition(before: string, after: string, position: number): number {
  const shorter = Math.min(before.length, after.length);
  let prefix = 0;
  while (prefix < shorter && before[prefix] === after[prefix]) prefix++;
  let suffix = 0;
  while (suffix < shorter - prefix && before[before.length - 1 - suffix] === after[after.length - 1 - suffix])
    suffix++;
  if (position <= prefix) return position;
  if (position >= before.length - suffix) return position + after.length - before.length;
  return after.length - suffix;
}
