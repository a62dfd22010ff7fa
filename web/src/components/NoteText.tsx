import { extractHashtags } from '../../../src/shared/hashtags.js';
import { layout } from '../app/state.js';
import { checklistItems } from '../model/checklist.js';
import { displayTitle } from '../model/conflicts.js';
import { isTagsOnlyLine, labelsOf } from '../model/labels.js';
import type { LocalNote } from '../sync/index.js';

/**
 * The most characters of its text a card lays out, per layout: more than its box (24em high,
 * overflow hidden) shows of ordinary text, so nothing visible is lost, while a long note's hidden
 * rest is not laid out again on every render, e.g. each search keystroke (decision 0018).
 */
const CARD_TEXT_CHARACTERS = { grid: 900, list: 2400 };

/** The text of a card: plain lines, or the checklist's open items and a count of completed ones. */
export function NoteText({
  note,
  onToggle,
}: {
  note: LocalNote;
  onToggle: (line: number, checked: boolean) => void;
}) {
  const items = note.checklistMode ? checklistItems(note.content) : [];
  const lines = note.content.split('\n');
  // A trailing line of hashtags only is shown as the chips below.
  while (lines.length > 0 && (lines.at(-1)!.trim() === '' || isTagsOnlyLine(lines.at(-1)!))) lines.pop();
  const open = items.filter((item) => !item.checked);
  const done = items.length - open.length;
  const shownItems = open.slice(0, 10);
  const shownText = lines.slice(0, 20).join('\n').slice(0, CARD_TEXT_CHARACTERS[layout.value]);
  // A label already readable in the card's text is not repeated as a chip.
  const inline = note.checklistMode
    ? extractHashtags(note.title, shownItems.map((item) => item.text).join('\n'))
    : extractHashtags(note.title, shownText);
  const labels = labelsOf(note).filter((label) => !inline.includes(label));
  return (
    <>
      {note.checklistMode ? (
        <ul class="card-items">
          {shownItems.map((item) => (
            // Only the box ticks (as in Keep): the text is not its label, so a tap on it opens the note.
            <li key={item.line} class={item.indented ? 'sub-item' : undefined}>
              <input
                type="checkbox"
                checked={false}
                aria-label={item.text}
                onChange={() => onToggle(item.line, true)}
              />
              <span>{item.text}</span>
            </li>
          ))}
          {done > 0 && (
            <li class="card-done">+ {done === 1 ? '1 completed item' : `${done} completed items`}</li>
          )}
        </ul>
      ) : (
        lines.length > 0 && <p class="card-text">{shownText}</p>
      )}
      {labels.length > 0 && (
        <ul class="chips" aria-label="Labels">
          {labels.map((label) => (
            <li key={label} class="chip">
              {label}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** An untitled note is named by its first line (the cards' accessible name, as the issue asks). */
export function noteName(note: Pick<LocalNote, 'title' | 'content'>): string {
  const firstLine = note.content
    .split('\n')
    .map((line) => line.replace(/^\s*[-*+]\s+\[[ xX]\]\s?/, '').trim())
    .find((line) => line !== '');
  return (displayTitle(note.title.trim()) || firstLine || 'Empty note').slice(0, 120);
}
