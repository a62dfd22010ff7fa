/**
 * Labels are the note's hashtags (D-TAG-1), read with the server's rules (src/shared/hashtags.ts),
 * so notes edited offline are filed under their labels at once. "Add label" appends the hashtag
 * to a trailing line of hashtags only, which cards show as chips (decision 0013).
 */
import { extractHashtags, normalizeTagName } from '../../../src/shared/hashtags.js';
import type { LocalNote } from '../sync/index.js';

const tagsByNote = new WeakMap<LocalNote, string[]>();

/** The note's labels from its current text (the server's `tags` lag behind local edits). */
export function labelsOf(note: LocalNote): string[] {
  let tags = tagsByNote.get(note);
  if (!tags) {
    tags = extractHashtags(note.title, note.content);
    tagsByNote.set(note, tags);
  }
  return tags;
}

/** Every label of these notes, sorted. */
export function allLabels(notes: Iterable<LocalNote>): string[] {
  const all = new Set<string>();
  for (const note of notes) for (const tag of labelsOf(note)) all.add(tag);
  return [...all].sort();
}

const TAGS_ONLY_LINE = /^\s*(#\S+\s*)+$/u;

/** A line that is nothing but hashtags: shown as chips rather than text. */
export function isTagsOnlyLine(line: string): boolean {
  return TAGS_ONLY_LINE.test(line);
}

/** The name a person typed as a label, as a hashtag's text: no `#`, no spaces. */
export function labelName(typed: string): string {
  return normalizeTagName(typed.trim().replace(/^#+/, '').replace(/\s+/g, '-'));
}

/** The content with `#label` appended on its trailing tags-only line (made when missing). */
export function addLabel(content: string, label: string): string {
  const tag = `#${labelName(label)}`;
  const lines = content.split('\n');
  const last = lines.at(-1) ?? '';
  if (content === '') return tag;
  if (isTagsOnlyLine(last)) {
    lines[lines.length - 1] = `${last.trimEnd()} ${tag}`;
    return lines.join('\n');
  }
  return `${content}\n${tag}`;
}
