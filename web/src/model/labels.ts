/**
 * Labels are the note's hashtags (D-TAG-1), read with the server's rules (src/shared/hashtags.ts),
 * so notes edited offline are filed under their labels at once. "Add label" appends the hashtag
 * to a trailing line of hashtags only, which cards show as chips (decision 0013).
 */
import { extractHashtags, normalizeTagName, replaceHashtags } from '../../../src/shared/hashtags.js';
import { readLines } from '../../../src/shared/markdown.js';
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

/**
 * A note's title and text with label `from` renamed to `to` ("Edit labels", issue 30 item 13):
 * every hashtag of that name outside code becomes `#to`; renamed onto a label the note already
 * has (a merge), a tags-only line keeps one of each. With `to` null (delete) a tags-only line
 * loses the hashtag (and goes when nothing is left on it), and a hashtag in a sentence keeps its
 * word without the `#`. Only the fields that change are returned.
 */
export function renameLabel(
  note: Pick<LocalNote, 'title' | 'content'>,
  from: string,
  to: string | null,
): Partial<Pick<LocalNote, 'title' | 'content'>> {
  const renamed = (line: string, tagsOnly: boolean) =>
    replaceHashtags(line, (name, written) => {
      if (name !== from) return undefined;
      if (to !== null) return `#${to}`;
      return tagsOnly ? '' : written;
    });
  const lines: string[] = [];
  for (const line of readLines(note.content)) {
    if (line.kind === 'code' || !isTagsOnlyLine(line.text)) {
      lines.push(line.kind === 'code' ? line.text : renamed(line.text, false));
      continue;
    }
    const kept = [...new Set(renamed(line.text, true).trim().split(/\s+/).filter(Boolean))];
    if (kept.length > 0) lines.push(`${/^\s*/.exec(line.text)![0]}${kept.join(' ')}`);
  }
  const changed: Partial<Pick<LocalNote, 'title' | 'content'>> = {};
  const title = renamed(note.title, false);
  const content = lines.join('\n');
  if (title !== note.title) changed.title = title;
  if (content !== note.content) changed.content = content;
  return changed;
}
