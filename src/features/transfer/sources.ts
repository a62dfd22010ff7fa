import type { Readable } from 'node:stream';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { errors } from '../../errors.js';
import { addOwnFormats } from '../../http/validation.js';
import type { NoteFields } from '../../model/noteFields.js';
import { NoteInput } from '../../shared/api/notes.js';
import { NOTE_COLORS, type NoteColor } from '../../shared/colors.js';
import { extractHashtags, MAX_TAG_LENGTH } from '../../shared/hashtags.js';
import { findString, hasNul, NUL_MESSAGE } from '../../storableText.js';
import { checklistItems } from '../notes/contentEdits.js';
import type { ExportedNote } from './exportFormat.js';
import { splitFrontMatter } from './frontMatter.js';
import { MAX_ELEMENT_COST, notesJsonElements } from './notesJson.js';

/** The files of an archive or folder being imported (zip.ts's ZipReader, or folder.ts). */
export interface SourceFiles {
  readonly names: readonly string[];
  size(name: string): number;
  read(name: string): Promise<Buffer>;
  /** The entry as a stream, for our export's notes.json, as large as the archive. */
  stream(name: string): Promise<Readable>;
  extract(name: string, target: string): Promise<{ sha256: string; size: number }>;
  close(): void;
}

/** One note found in the source, in our terms, before it is stored. */
export interface ImportItem {
  /** The file it came from, for the summary and for its derived id. */
  source: string;
  /**
   * An id the source gives (our export, front matter `id`), as given: kept when it is a free
   * UUID, otherwise a UUID is derived from it (service.ts); without one, from `source`.
   */
  givenId?: string;
  values: Partial<NoteFields>;
  /** Original times (Unix ms), when the source has them. */
  createdAt?: number;
  editedAt?: number;
  attachments: { source: string; filename: string }[];
}

/** Something in the source that could not be read, and why (the summary lists these). */
export interface Unreadable {
  source: string;
  reason: string;
}

type SourceFormat = 'export' | 'keep' | 'markdown';

/**
 * Google Keep's colours (Takeout `color`) to ours. Our twelve colours are Keep's twelve, in the
 * same order, with our own names (docs/backup.md has the table).
 */
const KEEP_COLORS: Record<string, NoteColor> = {
  DEFAULT: 'default',
  RED: 'coral',
  ORANGE: 'peach',
  YELLOW: 'sand',
  GREEN: 'mint',
  TEAL: 'sage',
  BLUE: 'fog',
  CERULEAN: 'storm',
  PURPLE: 'dusk',
  PINK: 'blossom',
  BROWN: 'clay',
  GRAY: 'chalk',
};

/** A text file (JSON, Markdown) larger than this is not a note: a note's content is at most 1 MB. */
const MAX_TEXT_ENTRY_BYTES = 8 * 1024 * 1024;

const KEEP_NOTE = /(^|\/)Keep\/[^/]+\.json$/;
const MARKDOWN = /\.(md|markdown)$/i;
/** Folders that archivers add and that hold no notes (macOS resource forks, dot files). */
const IGNORED = /(^|\/)(__MACOSX\/|\.)/;

export function detectFormat(files: SourceFiles): SourceFormat {
  if (files.names.includes('notes.json')) return 'export';
  if (files.names.some((name) => KEEP_NOTE.test(name))) return 'keep';
  if (files.names.some((name) => MARKDOWN.test(name) && !IGNORED.test(name))) return 'markdown';
  throw errors.invalidArchive(
    'No notes found: expected our export (notes.json), a Google Keep Takeout (Takeout/Keep/*.json) or Markdown files',
  );
}

/** The notes of the source, one at a time, in archive order. */
export function readItems(files: SourceFiles, format: SourceFormat): AsyncIterable<ImportItem | Unreadable> {
  if (format === 'export') return exportItems(files);
  if (format === 'keep') return keepItems(files);
  return markdownItems(files);
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const checkNoteInput = addOwnFormats(addFormats(new Ajv({ strict: false, allErrors: false }))).compile(
  NoteInput,
);

/**
 * The same limits as a REST create (D-ERR-5), and no U+0000 (a REST body holding one is
 * refused as it is parsed): null when the values pass, else why not.
 */
export function problemWith(values: Partial<NoteFields>): string | null {
  const nul = findString(values, hasNul);
  if (nul !== undefined) return `${nul.slice(1)} ${NUL_MESSAGE}`;
  if (checkNoteInput(values)) return null;
  const [first] = checkNoteInput.errors ?? [];
  return `${first?.instancePath.slice(1) || 'note'} ${first?.message ?? 'is invalid'}`;
}

/** A time given as an ISO string or a number of ms, when it is a plausible one. */
function timeOf(value: unknown): number | undefined {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

async function readText(files: SourceFiles, name: string, limit = MAX_TEXT_ENTRY_BYTES): Promise<string> {
  if (files.size(name) > limit) throw new Error(`larger than ${limit} bytes`);
  return (await files.read(name)).toString('utf8');
}

/**
 * Our export's notes, streamed from notes.json (notesJson.ts). A file that breaks off part-way
 * keeps the notes read before the break; the rest is reported as unreadable.
 */
async function* exportItems(files: SourceFiles): AsyncGenerator<ImportItem | Unreadable> {
  let read = 0;
  try {
    for await (const element of notesJsonElements(await files.stream('notes.json'))) {
      read++;
      const source = `notes.json#${element.index}`;
      if ('tooLarge' in element) {
        yield { source, reason: `larger than a note can be (${MAX_ELEMENT_COST} characters)` };
        continue;
      }
      const note = element.value;
      if (typeof note !== 'object' || note === null || Array.isArray(note)) {
        yield { source, reason: 'not a note object' };
        continue;
      }
      yield exportItem(source, note as ExportedNote);
    }
  } catch (err) {
    if (read === 0) {
      if ((err as { code?: string }).code === 'invalid_archive') throw err;
      throw errors.invalidArchive(`notes.json is not readable: ${(err as Error).message}`);
    }
    yield { source: `notes.json#${read}`, reason: `not readable from here on: ${(err as Error).message}` };
  }
}

function exportItem(source: string, note: ExportedNote): ImportItem {
  const { id, title, content, color, pinned, archived, trashed, checklistMode, sortOrder } = note;
  return {
    source,
    givenId: typeof id === 'string' && id !== '' ? id : undefined,
    values: { title, content, color, pinned, archived, trashed, checklistMode, sortOrder },
    createdAt: timeOf(note.createdAt),
    editedAt: timeOf(note.updatedAt),
    attachments: (Array.isArray(note.attachments) ? note.attachments : [])
      .filter((a) => typeof a?.path === 'string')
      .map((a) => ({ source: a.path, filename: String(a.filename ?? '') })),
  };
}

interface KeepNote {
  title?: unknown;
  textContent?: unknown;
  listContent?: { text?: unknown; isChecked?: unknown }[];
  color?: unknown;
  isPinned?: unknown;
  isArchived?: unknown;
  isTrashed?: unknown;
  labels?: { name?: unknown }[];
  attachments?: { filePath?: unknown; mimetype?: unknown }[];
  createdTimestampUsec?: unknown;
  userEditedTimestampUsec?: unknown;
}

/**
 * A Keep label as a hashtag (D-TAG-1): characters a tag cannot hold become `_`, and a label
 * without a letter gets a `label_` prefix (a tag must contain a letter).
 */
function labelHashtag(name: string): string {
  let tag = name.trim().replace(/[^\p{L}\p{M}\p{N}_\-/]+/gu, '_');
  if (!/\p{L}/u.test(tag)) tag = `label_${tag}`;
  return `#${Array.from(tag).slice(0, MAX_TAG_LENGTH).join('')}`;
}

/** Hashtags not already in the text, appended on a line of their own. */
function withHashtags(title: string, content: string, hashtags: string[]): string {
  const present = new Set(extractHashtags(title, content));
  const missing: string[] = [];
  for (const tag of hashtags) {
    const name = tag.slice(1).toLowerCase();
    if (present.has(name)) continue;
    present.add(name);
    missing.push(tag);
  }
  if (missing.length === 0) return content;
  return content === '' ? missing.join(' ') : `${content.replace(/\n*$/, '')}\n\n${missing.join(' ')}`;
}

const usecToMs = (value: unknown) => {
  const usec = typeof value === 'string' ? Number(value) : value;
  return typeof usec === 'number' ? timeOf(Math.floor(usec / 1000)) : undefined;
};

function dirnameOf(name: string): string {
  const slash = name.lastIndexOf('/');
  return slash < 0 ? '' : name.slice(0, slash + 1);
}

/** Entry names by folder and name without extension, for Keep's mismatched extensions. */
function stemIndex(files: SourceFiles): Map<string, string> {
  const index = new Map<string, string>();
  for (const name of files.names) index.set(name.replace(/\.[^./]*$/, ''), name);
  return index;
}

async function* keepItems(files: SourceFiles): AsyncGenerator<ImportItem | Unreadable> {
  const stems = stemIndex(files);
  for (const source of files.names.filter((name) => KEEP_NOTE.test(name) && !IGNORED.test(name))) {
    let note: KeepNote;
    try {
      note = JSON.parse(await readText(files, source)) as KeepNote;
    } catch (err) {
      yield { source, reason: `not readable JSON: ${(err as Error).message}` };
      continue;
    }
    if (typeof note !== 'object' || note === null || !('textContent' in note || 'listContent' in note)) {
      yield { source, reason: 'not a Keep note (no textContent or listContent)' };
      continue;
    }
    const title = typeof note.title === 'string' ? note.title : '';
    const list = Array.isArray(note.listContent) ? note.listContent : null;
    let content = list
      ? list
          .map((item) => `- [${item?.isChecked === true ? 'x' : ' '}] ${String(item?.text ?? '')}`)
          .join('\n')
      : typeof note.textContent === 'string'
        ? note.textContent
        : '';
    const labels = (Array.isArray(note.labels) ? note.labels : [])
      .map((label) => (typeof label?.name === 'string' ? labelHashtag(label.name) : null))
      .filter((tag): tag is string => tag !== null);
    content = withHashtags(title, content, labels);
    const folder = dirnameOf(source);
    const attachments = (Array.isArray(note.attachments) ? note.attachments : [])
      .filter((a) => typeof a?.filePath === 'string' && !(a.filePath as string).includes('/'))
      .map((a) => {
        const wanted = `${folder}${a.filePath as string}`;
        // Takeout sometimes names a file `.jpg` that the JSON calls `.jpeg`: match by stem.
        const found = files.names.includes(wanted) ? wanted : stems.get(wanted.replace(/\.[^./]*$/, ''));
        return { source: found ?? wanted, filename: a.filePath as string };
      });
    yield {
      source,
      values: {
        title,
        content,
        color: KEEP_COLORS[String(note.color ?? 'DEFAULT').toUpperCase()] ?? 'default',
        pinned: note.isPinned === true,
        archived: note.isArchived === true,
        trashed: note.isTrashed === true,
        checklistMode: list !== null,
      },
      createdAt: usecToMs(note.createdTimestampUsec),
      editedAt: usecToMs(note.userEditedTimestampUsec),
      attachments,
    };
  }
}

const booleanOr = (value: unknown, fallback: boolean) => (typeof value === 'boolean' ? value : fallback);

async function* markdownItems(files: SourceFiles): AsyncGenerator<ImportItem | Unreadable> {
  for (const source of files.names.filter((name) => MARKDOWN.test(name) && !IGNORED.test(name))) {
    let data: Record<string, unknown>;
    let body: string;
    try {
      ({ data, body } = splitFrontMatter(await readText(files, source)));
    } catch (err) {
      yield { source, reason: `not readable: ${(err as Error).message}` };
      continue;
    }
    const stem = source.slice(dirnameOf(source).length).replace(MARKDOWN, '');
    const title = typeof data.title === 'string' ? data.title : stem;
    const tags = Array.isArray(data.tags) ? data.tags.filter((t): t is string => typeof t === 'string') : [];
    const content = withHashtags(title, body, tags.map(labelHashtag));
    const color = NOTE_COLORS.includes(data.color as NoteColor) ? (data.color as NoteColor) : 'default';
    const folder = dirnameOf(source);
    const attachments = (Array.isArray(data.attachments) ? data.attachments : [])
      .filter((a): a is string => typeof a === 'string')
      .map((relative) => ({
        source: resolveRelative(folder, relative),
        filename: relative.split('/').pop()!,
      }));
    yield {
      source,
      givenId: typeof data.id === 'string' && data.id !== '' ? data.id : undefined,
      values: {
        title,
        content,
        color,
        pinned: booleanOr(data.pinned, false),
        archived: booleanOr(data.archived, false),
        trashed: booleanOr(data.trashed, false),
        // A note with `- [ ]` lines is a checklist unless its front matter says otherwise.
        checklistMode: booleanOr(data.checklistMode, checklistItems(content).length > 0),
      },
      createdAt: timeOf(data.createdAt),
      editedAt: timeOf(data.updatedAt),
      attachments,
    };
  }
}

/** `folder` + a relative path, with `.` and `..` resolved inside the archive (never above it). */
function resolveRelative(folder: string, relative: string): string {
  const parts: string[] = [];
  for (const part of `${folder}${relative}`.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.' && part !== '') parts.push(part);
  }
  return parts.join('/');
}
