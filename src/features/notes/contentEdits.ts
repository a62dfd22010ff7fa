/**
 * Edits of a note's content that agents ask for (append, tick a checklist item). Pure functions;
 * which lines are items is decided by the one Markdown reader (markdown.ts) that the share page
 * and hashtag extraction use too. Content is changed only where asked; everything else stays
 * byte for byte (D-NOTE-6).
 */
import { errors } from '../../errors.js';
import { readLines } from '../../shared/markdown.js';

/** Appends `text` on a new line, unless the content is empty or already ends with one. */
export function appendText(content: string, text: string): string {
  if (content === '' || content.endsWith('\n')) return content + text;
  return `${content}\n${text}`;
}

export interface ChecklistItem {
  /** Position among the note's checklist items, from 0. */
  index: number;
  text: string;
  checked: boolean;
  /** Offset in the content of the character between the brackets. */
  markOffset: number;
}

/** The Markdown task lines (`- [ ] milk`, `- [x] bread`) of a content, outside code fences. */
export function checklistItems(content: string): ChecklistItem[] {
  return readLines(content)
    .filter((line) => line.kind === 'task')
    .map((line, index) => ({
      index,
      text: line.label.trim(),
      checked: line.checked,
      markOffset: line.markOffset,
    }));
}

export type ChecklistSelector = { index: number } | { text: string };

type ChecklistPick =
  | { found: ChecklistItem }
  | { problem: 'no_items' | 'not_found' | 'ambiguous'; candidates: ChecklistItem[] };

/**
 * Finds one item by position, or by text: an exact match (ignoring case and surrounding spaces)
 * wins, otherwise the single item that contains the text.
 */
export function pickChecklistItem(items: ChecklistItem[], selector: ChecklistSelector): ChecklistPick {
  if (items.length === 0) return { problem: 'no_items', candidates: [] };
  if ('index' in selector) {
    const item = items[selector.index];
    return item ? { found: item } : { problem: 'not_found', candidates: items };
  }
  const wanted = selector.text.trim().toLocaleLowerCase();
  const exact = items.filter((i) => i.text.toLocaleLowerCase() === wanted);
  const matches = exact.length > 0 ? exact : items.filter((i) => i.text.toLocaleLowerCase().includes(wanted));
  if (matches.length === 1) return { found: matches[0]! };
  return matches.length === 0
    ? { problem: 'not_found', candidates: items }
    : { problem: 'ambiguous', candidates: matches };
}

/** The content with one item's box set to `[x]` or `[ ]`. */
export function setItemChecked(content: string, item: ChecklistItem, checked: boolean): string {
  const mark = checked ? (item.checked ? content[item.markOffset]! : 'x') : ' ';
  return content.slice(0, item.markOffset) + mark + content.slice(item.markOffset + 1);
}

/** The error for a checklist item that pickChecklistItem could not pick, listing the candidates. */
export function checklistProblem(
  problem: 'no_items' | 'not_found' | 'ambiguous',
  candidates: ChecklistItem[],
) {
  const listed = candidates.map((i) => `${i.index}: ${i.text}`).join('; ');
  if (problem === 'no_items') {
    return errors.checklistItemNotFound('The note has no checklist items (- [ ] lines)');
  }
  if (problem === 'ambiguous') {
    return errors.checklistItemAmbiguous(`Several checklist items match: ${listed}`);
  }
  return errors.checklistItemNotFound(`No such checklist item; the items are ${listed}`);
}
