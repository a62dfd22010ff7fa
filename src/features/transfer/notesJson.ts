import type { Readable } from 'node:stream';
import Assembler from 'stream-json/assembler.js';
import parser from 'stream-json/parser.js';
import { errors } from '../../errors.js';
import { EXPORT_FORMAT } from './exportFormat.js';

/**
 * Our export's notes.json read as a stream (decision 0029): the parser hands over tokens, and
 * only one element of `notes` at a time is assembled into a value, so memory stays bounded
 * whatever the file's size. An element larger than MAX_ELEMENT_COST is skipped as it streams
 * (a note is at most ~1 MB of text), and nothing outside `notes` is kept but `format`.
 * Tokens are handled as the parser emits them, without a promise each: elements wait in a
 * queue of their own while the parser is paused.
 */
export type NotesJsonElement = { index: number; value: unknown } | { index: number; tooLarge: true };

/** Characters of text plus one per token: room for a note at its limits and its attachments. */
export const MAX_ELEMENT_COST = 4 * 1024 * 1024;
/**
 * Tokens read from one notes.json, in all: parsing costs about a microsecond a token, so this
 * bounds an import's parsing to seconds whatever the file holds (a note of ours is ~100 tokens).
 */
export const MAX_TOKENS = 20_000_000;
/** `format` and top-level keys are short; more of them is not kept. */
const MAX_HEAD_TEXT = 100;

const VALUE_START = new Set([
  'startObject',
  'startArray',
  'startString',
  'startNumber',
  'nullValue',
  'trueValue',
  'falseValue',
]);
const VALUE_END = new Set([
  'endObject',
  'endArray',
  'endString',
  'endNumber',
  'nullValue',
  'trueValue',
  'falseValue',
]);
/** The parser streams keys, strings and numbers in pieces; the assembler takes them whole. */
const PACKED: Record<string, string> = {
  endKey: 'keyValue',
  endString: 'stringValue',
  endNumber: 'numberValue',
};
const FED = new Set([
  'startObject',
  'startArray',
  'endObject',
  'endArray',
  'nullValue',
  'trueValue',
  'falseValue',
]);

interface Element {
  index: number;
  assembler: Assembler;
  cost: number;
  tooLarge: boolean;
}

interface Token {
  name: string;
  value?: string;
}

/**
 * The elements of notes.json's `notes`, in order. Throws invalid_archive when the file is not
 * our export (no object, no `format` of ours before `notes`, no `notes` array), and an error the
 * caller reports when the file breaks off or holds more than MAX_TOKENS.
 */
export async function* notesJsonElements(source: Readable): AsyncGenerator<NotesJsonElement> {
  const tokens = source.pipe(parser.asStream({ packValues: false }));
  const reader = new NotesReader();
  const queue: NotesJsonElement[] = [];
  let failure: unknown;
  let ended = false;
  let wake = () => {};
  source.once('error', (err) => tokens.destroy(err));
  tokens.on('data', (token: Token) => {
    if (failure !== undefined || ended) return;
    try {
      const element = reader.read(token);
      if (element) queue.push(element);
      if (reader.finished) ended = true;
    } catch (err) {
      failure = err;
    }
    if (queue.length > 0 || ended || failure !== undefined) {
      tokens.pause();
      wake();
    }
  });
  tokens.once('end', () => {
    ended = true;
    wake();
  });
  tokens.once('error', (err) => {
    failure ??= err;
    wake();
  });
  try {
    for (;;) {
      const element = queue.shift();
      if (element) {
        yield element;
        continue;
      }
      if (failure !== undefined) throw failure;
      if (ended) break;
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      tokens.resume();
      await woken;
    }
  } finally {
    source.unpipe(tokens);
    source.destroy();
    tokens.destroy();
  }
  if (!reader.finished) throw notOurs();
}

/** The state of one read of notes.json, a token at a time. */
class NotesReader {
  /** Containers open: 1 in the top object, 2 in `notes`, where each element starts and ends. */
  private depth = 0;
  private key = '';
  private format: string | undefined;
  private inNotes = false;
  private index = 0;
  private tokens = 0;
  private element: Element | null = null;
  /** The text of the key, string or number being read; null when it is not kept. */
  private text: string | null = null;
  /** The end of `notes` was read: nothing after it is. */
  finished = false;

  /** Takes the next token; returns the element it completes. */
  read(token: Token): NotesJsonElement | undefined {
    const { name } = token;
    if (++this.tokens > MAX_TOKENS) throw new Error(`more than ${MAX_TOKENS} JSON tokens`);
    if (this.depth === 0 && name !== 'startObject') throw notOurs();
    const top = this.depth === 1 && !this.inNotes;
    let element = this.element;
    if (this.inNotes && this.depth === 2 && !element && VALUE_START.has(name)) {
      element = this.element = { index: this.index++, assembler: new Assembler(), cost: 0, tooLarge: false };
    }
    if (element && !element.tooLarge) {
      element.cost += 1 + (name === 'stringChunk' || name === 'numberChunk' ? token.value!.length : 0);
      element.tooLarge = element.cost > MAX_ELEMENT_COST;
    }
    switch (name) {
      case 'startArray':
        if (top && this.key === 'notes') {
          if (this.format !== EXPORT_FORMAT) throw notOurs();
          this.inNotes = true;
        }
        this.depth++;
        break;
      case 'startObject':
        this.depth++;
        break;
      case 'endObject':
      case 'endArray':
        this.depth--;
        if (this.inNotes && this.depth === 1) this.finished = true;
        break;
      case 'startKey':
      case 'startString':
      case 'startNumber':
        this.text = element ? (element.tooLarge ? null : '') : top ? '' : null;
        break;
      case 'stringChunk':
      case 'numberChunk':
        if (this.text === null || element?.tooLarge) this.text = null;
        else
          this.text = element ? this.text + token.value : (this.text + token.value).slice(0, MAX_HEAD_TEXT);
        break;
      case 'endKey':
        if (top) this.key = this.text ?? '';
        break;
      case 'endString':
        if (top && this.key === 'format') this.format = this.text ?? undefined;
        break;
    }
    if (!element) return undefined;
    if (!element.tooLarge) {
      if (name in PACKED) {
        // A key `__proto__` would set the assembled object's prototype: kept under another name.
        const value = name === 'endKey' && this.text === '__proto__' ? ' __proto__' : this.text;
        element.assembler.consume({ name: PACKED[name]!, value: value! });
      } else if (FED.has(name)) element.assembler.consume(token);
    }
    if (this.depth !== 2 || !VALUE_END.has(name)) return undefined;
    this.element = null;
    return element.tooLarge
      ? { index: element.index, tooLarge: true }
      : { index: element.index, value: element.assembler.current };
  }
}

const notOurs = () => errors.invalidArchive(`notes.json is not a ${EXPORT_FORMAT} file`);
