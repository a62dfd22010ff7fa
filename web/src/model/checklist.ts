/**
 * Checklist edits on a note's content (D-NOTE-6: `- [ ] milk`, `- [x] bread`), read with the
 * server's own Markdown reader (src/shared/markdown.ts) so both agree on what an item is.
 * A tick changes one character and never moves a line: "Completed" is a display grouping only,
 * so two people ticking different items never touch the same line (decision 0013).
 */
import { readLines, SUB_ITEM_INDENT } from '../../../src/shared/markdown.js';

interface ChecklistItem {
  /** Index among the content's lines. */
  line: number;
  checked: boolean;
  text: string;
  /** A sub-item: Keep's one level of indent, written as indentation before the bullet. */
  indented: boolean;
}

/** A content edit and where the caret goes after it: line `focus`, at `caret` (end of text when absent). */
export interface ItemEdit {
  content: string;
  focus: number;
  caret?: number;
}

function splitContent(content: string): string[] {
  return content.split(/\r\n|\r|\n/);
}

export function checklistItems(content: string): ChecklistItem[] {
  const items: ChecklistItem[] = [];
  readLines(content).forEach((line, index) => {
    if (line.kind === 'task') {
      items.push({ line: index, checked: line.checked, text: line.label, indented: line.indented });
    }
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

/** The part of an item's line before its text: indentation, bullet and box. */
function itemPrefix(content: string, line: number): string | null {
  const task = readLines(content)[line];
  return task?.kind === 'task' ? task.text.slice(0, task.text.length - task.label.length) : null;
}

const oneLine = (text: string) => text.replace(/[\r\n]+/g, ' ');

export function setItemText(content: string, line: number, text: string): string {
  const prefix = itemPrefix(content, line);
  if (prefix === null) return content;
  return replaceLines(content, (lines) => {
    lines[line] = `${prefix}${oneLine(text)}`;
  });
}

/** Adds an unticked item after the last item (or at the end). */
export function addItem(content: string, text: string): string {
  const items = checklistItems(content);
  const item = `- [ ] ${oneLine(text)}`;
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

/**
 * The items shown together with the item on `line`: the open ones, or the ticked ones under
 * "Completed". Moves happen within it, so a ticked item in between is stepped over.
 */
function groupOf(items: ChecklistItem[], line: number): ChecklistItem[] {
  const item = items.find((candidate) => candidate.line === line);
  return item ? items.filter((candidate) => candidate.checked === item.checked) : [];
}

/**
 * What moves with the item at `index` of its group: a sub-item alone, an item with the sub-items
 * under it (as in Keep). Returned as [start, end) indices into the group.
 */
function unitAt(group: ChecklistItem[], index: number): [number, number] {
  if (group[index]!.indented) return [index, index + 1];
  let end = index + 1;
  while (end < group.length && group[end]!.indented) end++;
  return [index, end];
}

/** The unit a unit moving up steps over: the one whose last item is at `index`. */
function unitEndingAt(group: ChecklistItem[], index: number): [number, number] {
  let start = index;
  while (start > 0 && group[start]!.indented) start--;
  return [start, index + 1];
}

/**
 * The group's lines rewritten in `order`: the group keeps the line positions it had, so other text
 * and the other group's items stay where they were. The caret follows the item first on `line`.
 */
function reordered(content: string, group: ChecklistItem[], order: ChecklistItem[], line: number): ItemEdit {
  const original = splitContent(content);
  return {
    content: replaceLines(content, (lines) => {
      group.forEach((slot, index) => {
        lines[slot.line] = original[order[index]!.line]!;
      });
    }),
    focus: group[order.findIndex((item) => item.line === line)]!.line,
  };
}

/**
 * Moves the item on `line` (with its sub-items) above the previous item of its group (-1) or below
 * the next one (+1): a sub-item steps over one item, an item over an item and its sub-items.
 */
export function moveItem(content: string, line: number, direction: -1 | 1): ItemEdit {
  const group = groupOf(checklistItems(content), line);
  const index = group.findIndex((item) => item.line === line);
  if (index < 0) return { content, focus: line };
  const [start, end] = unitAt(group, index);
  const sub = group[index]!.indented;
  const step = direction === 1 ? end : start - 1;
  if (step < 0 || step >= group.length) return { content, focus: line };
  const [from, to] = sub
    ? [step, step + 1]
    : direction === 1
      ? unitAt(group, step)
      : unitEndingAt(group, step);
  const moving = group.slice(start, end);
  const passed = group.slice(from, to);
  const order =
    direction === 1
      ? [...group.slice(0, start), ...passed, ...moving, ...group.slice(to)]
      : [...group.slice(0, from), ...moving, ...passed, ...group.slice(end)];
  return reordered(content, group, order, line);
}

/**
 * Moves the item on `line` (with its sub-items) next to the item on `target` of the same group,
 * before or after it (after an item's sub-items too, unless the one moving is a sub-item): a drop.
 */
export function moveItemTo(
  content: string,
  line: number,
  target: number,
  edge: 'before' | 'after',
): ItemEdit {
  const group = groupOf(checklistItems(content), line);
  const index = group.findIndex((item) => item.line === line);
  const targetIndex = group.findIndex((item) => item.line === target);
  if (index < 0 || targetIndex < 0) return { content, focus: line };
  const [start, end] = unitAt(group, index);
  if (targetIndex >= start && targetIndex < end) return { content, focus: line };
  const moving = group.slice(start, end);
  const rest = [...group.slice(0, start), ...group.slice(end)];
  const sub = group[index]!.indented;
  const [, targetEnd] = sub ? [0, targetIndex + 1] : unitAt(group, targetIndex);
  const anchor = edge === 'before' ? group[targetIndex]! : group[targetEnd - 1]!;
  const at = rest.indexOf(anchor) + (edge === 'before' ? 0 : 1);
  const order = [...rest.slice(0, at), ...moving, ...rest.slice(at)];
  return reordered(content, group, order, line);
}

/**
 * Makes the item on `line` a sub-item of the one above it, or an item again (Tab, Shift+Tab).
 * The first item of its group has nothing to hang under and stays as it is, as in Keep.
 */
export function indentItem(content: string, line: number, indented: boolean): ItemEdit {
  const group = groupOf(checklistItems(content), line);
  const index = group.findIndex((item) => item.line === line);
  const unchanged = { content, focus: line };
  if (index < 0 || group[index]!.indented === indented || (indented && index === 0)) return unchanged;
  return {
    content: replaceLines(content, (lines) => {
      const bare = lines[line]!.replace(/^[ \t]+/, '');
      lines[line] = indented ? `${SUB_ITEM_INDENT}${bare}` : bare;
    }),
    focus: line,
  };
}

/**
 * Enter at `caret` in the item on `line`: the text after the caret becomes a new unticked item
 * just below it, at the same indentation, and the caret goes to its start.
 */
export function splitItem(content: string, line: number, caret: number): ItemEdit {
  const task = readLines(content)[line];
  if (task?.kind !== 'task') return { content, focus: line };
  const indent = /^[ \t]*/.exec(task.text)![0];
  const prefix = task.text.slice(0, task.text.length - task.label.length);
  return {
    content: replaceLines(content, (lines) => {
      lines.splice(
        line,
        1,
        `${prefix}${task.label.slice(0, caret)}`,
        `${indent}- [ ] ${task.label.slice(caret)}`,
      );
    }),
    focus: line + 1,
    caret: 0,
  };
}

/**
 * Backspace at the start of the item on `line`: an empty item goes (the caret to the end of the
 * item above it), a sub-item becomes an item, and an item's text joins the end of the item above.
 * `null` when there is nothing above it to go to.
 */
export function backspaceItem(content: string, line: number): ItemEdit | null {
  const group = groupOf(checklistItems(content), line);
  const index = group.findIndex((item) => item.line === line);
  if (index < 0) return null;
  const item = group[index]!;
  const above = group[index - 1];
  const lineOf = (other: ChecklistItem) => (other.line > line ? other.line - 1 : other.line);
  if (item.text === '') {
    const next = above ?? group[index + 1];
    return { content: removeItem(content, line), focus: next ? lineOf(next) : -1 };
  }
  if (item.indented) return indentItem(content, line, false);
  if (!above) return null;
  const joined = setItemText(content, above.line, `${above.text}${item.text}`);
  return { content: removeItem(joined, line), focus: lineOf(above), caret: above.text.length };
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
