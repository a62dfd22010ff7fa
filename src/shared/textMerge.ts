import { diffIndices } from 'node-diff3';

/**
 * Line-by-line three-way merge of a text (D-SYNC-9): pure, no database, unit-tested directly.
 * Shared by the server's push and the web app's sync engine (web/src/sync), so a device merges
 * before pushing exactly as the server would merge after (no node: imports here).
 *
 * The line diffs (longest common subsequence) come from node-diff3. Its own diff3Merge is not
 * used as is: like diff3 and git it calls two edits a conflict when they merely touch, so two
 * people ticking neighbouring items of one checklist ("- [x] milk" on line 1, "- [x] bread" on
 * line 2) would conflict. D-SYNC-9 asks for less: only lines that both sides changed
 * differently are a conflict. So the two diffs against the base are combined here, hunk by hunk.
 */

/** One side's change to the base: base lines [start, end) become `lines` (start = end: insertion). */
interface Hunk {
  start: number;
  end: number;
  lines: string[];
}

/**
 * One side's hunks against the base. The diff groups neighbouring changed lines into one hunk;
 * a hunk that changes lines one for one (same count) is split into one hunk per changed line,
 * so that a side that ticked "milk" and "bread" and a side that ticked only "milk" (the same
 * push arriving again, or another device) agree on "milk" instead of clashing on the pair.
 */
function hunks(base: string[], text: string): Hunk[] {
  return diffIndices(base, text.split('\n')).flatMap((h) => {
    const [start, length] = h.buffer1;
    const lines = h.buffer2Content;
    if (lines.length !== length) return [{ start, end: start + length, lines }];
    return lines.flatMap((line, i) =>
      line === base[start + i] ? [] : [{ start: start + i, end: start + i + 1, lines: [line] }],
    );
  });
}

const sameHunk = (a: Hunk, b: Hunk) =>
  a.start === b.start && a.end === b.end && a.lines.join('\n') === b.lines.join('\n');

/**
 * Whether `later` (which starts at or after `earlier`) changes base lines `earlier` also
 * changes: their ranges overlap, or both insert at the same place (their order is unknown).
 * An insertion right before or right after a changed range is not a conflict.
 */
function clashes(earlier: Hunk, later: Hunk): boolean {
  const bothInsert = earlier.start === earlier.end && later.start === later.end;
  return later.start < earlier.end || (bothInsert && later.start === earlier.start);
}

/**
 * Merges the changes that `ours` and `theirs` each made to `base`, line by line. Returns the
 * merged text, or undefined when some base lines were changed by both sides differently (the
 * caller then falls back to last-writer-wins for the whole text). The same change made on both
 * sides is taken once. Lines are split on "\n", so "\r\n" texts keep their "\r".
 */
export function mergeLines(base: string, ours: string, theirs: string): string | undefined {
  const baseLines = base.split('\n');
  // Same-side hunks never overlap, so after sorting, a hunk can only clash with the
  // furthest-reaching one taken before it. Insertions sort before a change that starts at the
  // same line: they go in front of it.
  const all = [...hunks(baseLines, ours), ...hunks(baseLines, theirs)].sort(
    (a, b) => a.start - b.start || Number(a.start !== a.end) - Number(b.start !== b.end),
  );
  const taken: Hunk[] = [];
  let furthest: Hunk | undefined;
  for (const hunk of all) {
    if (furthest && clashes(furthest, hunk)) {
      if (sameHunk(furthest, hunk)) continue;
      return undefined;
    }
    taken.push(hunk);
    if (!furthest || hunk.end >= furthest.end) furthest = hunk;
  }
  const merged: string[] = [];
  let position = 0;
  for (const hunk of taken) {
    merged.push(...baseLines.slice(position, hunk.start), ...hunk.lines);
    position = hunk.end;
  }
  merged.push(...baseLines.slice(position));
  return merged.join('\n');
}
