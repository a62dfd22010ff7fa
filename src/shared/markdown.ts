/**
 * The one reader of the Markdown in a note's content. Every place that needs to know which lines
 * are checklist items (D-NOTE-6) or code (D-TAG-1: no hashtags inside fenced code) asks here: the
 * MCP checklist edit, the share page and hashtag extraction, so they cannot disagree.
 * Plain string work only (no Node-only imports): the web app uses this module too.
 *
 * Only the parts of CommonMark that decide those two questions are read (docs/rules.md#d-note-6):
 * - A fence opens on a line of at most 3 spaces of indentation and 3 or more backticks or tildes;
 *   a backtick fence's info string may not contain a backtick. It closes on a line of the same
 *   character, at least as long, with nothing after it but spaces or tabs. A fence never closed
 *   runs to the end of the content. Every line from the opening to the closing line is code.
 * - A task line, outside code, is indentation, a bullet (`-`, `*` or `+`), spaces, then `[ ]`,
 *   `[x]` or `[X]`; the rest of the line, after at most one space, is the item's text. An item
 *   indented before its bullet is a sub-item (one level, as in Keep).
 * Lines end at `\n`, `\r\n` or a lone `\r`.
 */

/** What the app writes before a sub-item's bullet (Takeout's indented items too; decision 0040). */
export const SUB_ITEM_INDENT = '  ';

type MarkdownLine =
  /** A fence line or a line inside a fenced code block. */
  | { kind: 'code'; text: string; offset: number }
  | {
      kind: 'task';
      text: string;
      offset: number;
      checked: boolean;
      /** Offset in the content of the character between the brackets. */
      markOffset: number;
      /** What follows the box. */
      label: string;
      /** Indented before its bullet: a sub-item (Keep's one level of indent, decision 0040). */
      indented: boolean;
    }
  | { kind: 'other'; text: string; offset: number };

/** `text` is the line without its ending; `offset` is where it starts in the content. */
interface RawLine {
  text: string;
  offset: number;
}

const LINE_END = /\r\n|\r|\n/g;
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const TASK_LINE = /^([ \t]*[-*+][ \t]+\[)([ xX])\][ \t]?(.*)$/;

function splitLines(content: string): RawLine[] {
  const lines: RawLine[] = [];
  let start = 0;
  for (const end of content.matchAll(LINE_END)) {
    lines.push({ text: content.slice(start, end.index), offset: start });
    start = end.index + end[0].length;
  }
  lines.push({ text: content.slice(start), offset: start });
  return lines;
}

/** The run of backticks or tildes that opens a fence on this line, if it does. */
function openingFence(line: string): string | null {
  const match = FENCE.exec(line);
  if (!match) return null;
  const [, run, info] = match;
  return run![0] === '`' && info!.includes('`') ? null : run!;
}

function closesFence(line: string, open: string): boolean {
  const match = FENCE.exec(line);
  if (!match) return false;
  const [, run, rest] = match;
  return run![0] === open[0] && run!.length >= open.length && rest!.trim() === '';
}

function classifyLine({ text, offset }: RawLine): MarkdownLine {
  const task = TASK_LINE.exec(text);
  if (!task) return { kind: 'other', text, offset };
  return {
    kind: 'task',
    text,
    offset,
    checked: task[2] !== ' ',
    markOffset: offset + task[1]!.length,
    label: task[3]!,
    indented: /^[ \t]/.test(text),
  };
}

/** Every line of `content`, in order, as code, a task item or other text. */
export function readLines(content: string): MarkdownLine[] {
  const lines: MarkdownLine[] = [];
  let open: string | null = null;
  for (const line of splitLines(content)) {
    if (open !== null) {
      lines.push({ kind: 'code', ...line });
      if (closesFence(line.text, open)) open = null;
      continue;
    }
    open = openingFence(line.text);
    lines.push(open === null ? classifyLine(line) : { kind: 'code', ...line });
  }
  return lines;
}

/** The lines of `content` that are not code, the text hashtags are read from. */
export function linesOutsideCode(content: string): string[] {
  return readLines(content)
    .filter((line) => line.kind !== 'code')
    .map((line) => line.text);
}
