import { linesOutsideCode } from './markdown.js';

/**
 * Hashtag extraction (D-TAG-1): `#` at the start of the text or after whitespace or an opening
 * bracket, then 1–64 letters, digits, `_`, `-` or `/` in any script. Not tags: `# heading`,
 * `a#b`, `https://x/#top`, pure numbers, anything inside fenced code blocks.
 * Our reading where the decision is silent (docs/api.md "Tags"): a run longer than 64
 * characters is not a tag (never silently truncated); a tag must contain at least one letter,
 * which also excludes `#1`, `#2024-01` and `#---`; trailing `/` is dropped (`#work/` is `work`);
 * a note has at most MAX_TAGS_PER_NOTE tags, the first distinct ones in reading order.
 */
const HASHTAG = /(?<=^|[\s\p{Ps}])#([\p{L}\p{M}\p{N}_\-/]+)/gu;
const HAS_LETTER = /\p{L}/u;
export const MAX_TAG_LENGTH = 64;
/**
 * Distinct hashtags that make tags, per note; later ones are plain text. Without a cap one note
 * of 1,000,000 characters holds ~100,000 of them: tens of thousands of rows written per save,
 * and 32,767 of them overflowed SQLite's bound-variable limit (a 500).
 * docs/decisions/0006-bounded-work-per-request.md
 */
export const MAX_TAGS_PER_NOTE = 100;

export function normalizeTagName(raw: string): string {
  return raw.normalize('NFC').toLowerCase();
}

/**
 * Sorted, de-duplicated, lower-cased tag names found in a note's title and content: the first
 * MAX_TAGS_PER_NOTE distinct ones, title first, then the content from the top.
 */
export function extractHashtags(title: string, content: string): string[] {
  const found = new Set<string>();
  for (const line of [title, ...linesOutsideCode(content)]) {
    for (const match of line.matchAll(HASHTAG)) {
      if (found.size === MAX_TAGS_PER_NOTE) return [...found].sort();
      const run = match[1]!;
      if (run.length > MAX_TAG_LENGTH) continue;
      const name = normalizeTagName(run.replace(/\/+$/, ''));
      if (name.length > 0 && name.length <= MAX_TAG_LENGTH && HAS_LETTER.test(name)) found.add(name);
    }
  }
  return [...found].sort();
}

/**
 * The line with each hashtag (by D-TAG-1's reading above) replaced by what `replace` returns for
 * its tag name (and the name as written, without `#`); a hashtag that makes no tag, or for which it returns undefined, stays as it is.
 * The web app's label rename and delete (web/src/model/labels.ts).
 */
export function replaceHashtags(
  line: string,
  replace: (name: string, written: string) => string | undefined,
): string {
  return line.replace(HASHTAG, (whole, run: string) => {
    if (run.length > MAX_TAG_LENGTH) return whole;
    const name = normalizeTagName(run.replace(/\/+$/, ''));
    if (name.length === 0 || !HAS_LETTER.test(name)) return whole;
    return replace(name, run) ?? whole;
  });
}
