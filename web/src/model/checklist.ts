/**
 * Checklist edits on a note's content (D-NOTE-6: `- [ ] milk`, `- [x] bread`), read with the
 * server's own Markdown reader (src/shared/markdown.ts) so both agree on what an item is.
 * A tick changes one character and never moves a line: "Completed" is a display grouping only,
 * so two people ticking different items never touch the same line (decision 0013).
 */
import { readLines } from '../../../src/shared/markdown.js';

interface ChecklistItem {
  /** Index among the content's lines. */
  line: number;
  checked: boolean;
  text: string;
}

function splitContent(content: string): string[] {
  return content.split(/\r\n|\r|\n/);
}

export function checklistItems(content: string): ChecklistItem[] {
  const items: ChecklistItem[] = [];
  readLines(content).forEach((line, index) => {
    if (line.kind === 'task') items.push({ line: index, checked: line.checked, text: line.label });
  });
  return items;
}

/** The content with the item on line `line` ticked or unticked: one character changes. */
export function setItemChecked(content: string, line: number, checked: boolean): string {
  const task = readLines(content)[line];
  if (task?.kind !== 'task') return content;
  return `${content.slice(0, task.markOffset)}${checked ? 'x' : ' '}${content.slice(task.markOffset + 1)}`;
}

function replaceLines(content: string, edit: (lines: string[]) => void): string {
  const lines = splitContent(content);
  edit(lines);
  return lines.join('\n');
}

export function setItemText(content: string, line: number, text: string): string {
  const task = readLines(content)[line];
  if (task?.kind !== 'task') return content;
  const prefix = task.text.slice(0, task.text.length - task.label.length);
  return replaceLines(content, (lines) => {
    lines[line] = `${prefix}${text.replace(/[\r\n]+/g, ' ')}`;
  });
}

/** Adds an unticked item after the last item (or at the end). */
export function addItem(content: string, text: string): string {
  const items = checklistItems(content);
  const item = `- [ ] ${text.replace(/[\r\n]+/g, ' ')}`;
  if (content === '') return item;
  const last = items.at(-1);
  return replaceLines(content, (lines) => {
    lines.splice(last ? last.line + 1 : lines.length, 0, item);
  });
}

export function removeItem(content: string, line: number): string {
  return replaceLines(content, (lines) => {
    lines.splice(line, 1);
  });
}

/** Moves the item on `line` above the previous item (-1) or below the next one (+1). */
export function moveItem(content: string, line: number, direction: -1 | 1): string {
  const items = checklistItems(content);
  const index = items.findIndex((item) => item.line === line);
  const neighbour = items[index + direction];
  if (index < 0 || !neighbour) return content;
  return replaceLines(content, (lines) => {
    [lines[line], lines[neighbour.line]] = [lines[neighbour.line]!, lines[line]!];
  });
}

/** "Show checkboxes": every non-empty line outside code becomes an unticked item. */
export function toChecklist(content: string): string {
  const lines = readLines(content);
  return lines
    .map((line) =>
      line.kind === 'other' && line.text.trim() !== '' ? `- [ ] ${line.text.trim()}` : line.text,
    )
    .join('\n');
}

/** "Hide checkboxes": items become their text (ticks are dropped, as in Keep). */
export function fromChecklist(content: string): string {
  return readLines(content)
    .map((line) => (line.kind === 'task' ? line.label : line.text))
    .join('\n');
}
