/** Note answers (the Note schema) from rows, one by one or as size-bounded batches of a list. */
import { LRUCache } from 'lru-cache';
import { iso } from '../clock.js';
import { engine } from '../db/dialect.js';
import type { Db } from '../db/types.js';
import type { Attachment, Note } from '../shared/api/notes.js';
import type { NoteColor } from '../shared/colors.js';
import { extractHashtags } from '../shared/hashtags.js';
import { type AttachmentRow, attachmentsByNote } from './attachments.js';
import type { ListedNote, ListedNoteVersion, NoteRow, NoteViewRow } from './notes.js';
import * as store from './notes.js';
import { type PersonalLookup, spliceReminder } from './personal.js';
import { tagsByNote } from './tags.js';

export function attachmentView(row: AttachmentRow): Attachment {
  return {
    id: row.id,
    noteId: row.note_id,
    filename: row.filename,
    mimeType: row.mime_type,
    size: row.size,
    thumbnailPath: row.thumbnail_path,
    width: row.width,
    height: row.height,
    createdAt: iso(row.created_at),
  };
}

/** Note responses with tags and attachments: two queries whatever the number of notes. */
async function noteViews(db: Db, rows: readonly NoteViewRow[]): Promise<Note[]> {
  const ids = rows.map((r) => r.id);
  const [tags, attachments] = await Promise.all([tagsByNote(db, ids), attachmentsByNote(db, ids)]);
  return rows.map((row) => noteViewOf(row, tags.get(row.id) ?? [], attachments.get(row.id) ?? []));
}

/** The Note answer of a row, its tag names and its attachment rows. */
function noteViewOf(row: NoteViewRow, tags: string[], attachments: readonly AttachmentRow[]): Note {
  return {
    id: row.id,
    ownerId: row.owner_id,
    title: row.title,
    content: row.content,
    color: row.color as NoteColor,
    pinned: row.pinned === 1,
    archived: row.archived === 1,
    trashed: row.trashed === 1,
    trashedAt: row.trashed_at === null ? null : iso(row.trashed_at),
    checklistMode: row.checklist_mode === 1,
    sortOrder: row.sort_order,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    version: row.version,
    tags,
    attachments: attachments.map(attachmentView),
    // Last, and null for every reader: personal.ts splices a reader's own into the cached JSON.
    reminder: null,
  };
}

/**
 * How much of a streamed list is read per database round: at most this many notes, and at most
 * this many bytes of title and content (a note larger than that is read alone). Counted notes
 * alone let 500 notes of 1 MB each be one 500 MB round; see docs/decisions/0004-streamed-lists.md.
 */
const LIST_BATCH = { notes: 500, bytes: 4 * 1024 * 1024 };

/** `listed` cut into consecutive runs of at most `limits.notes` notes and `limits.bytes` bytes. */
export function* listBatches<Listed extends ListedNote>(
  listed: readonly Listed[],
  limits: { notes: number; bytes: number } = LIST_BATCH,
): Generator<Listed[]> {
  let batch: Listed[] = [];
  let bytes = 0;
  for (const note of listed) {
    if (batch.length > 0 && (batch.length === limits.notes || bytes + note.bytes > limits.bytes)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(note);
    bytes += note.bytes;
  }
  if (batch.length > 0) yield batch;
}

const idsOf = (notes: readonly ListedNote[]) => notes.map((note) => note.id);

/**
 * The notes of `listed` that the user may see, in that order, in batches (listBatches). Each
 * batch is its own queries, so the connection is free for other requests between batches
 * (while the client reads the previous one); see docs/decisions/0004-streamed-lists.md.
 */
export async function* noteViewBatches(
  db: Db,
  userId: number,
  listed: readonly ListedNote[],
  limits = LIST_BATCH,
): AsyncGenerator<Note[]> {
  for (const batch of listBatches(listed, limits)) {
    yield noteViews(db, await store.notesByIds(db, userId, idsOf(batch)));
  }
}

/**
 * How many bytes of note answers the JSON cache keeps: about 30,000 short notes, or a few large
 * ones; past it the least recently used go (docs/decisions/0023-note-answer-cache.md).
 */
const NOTE_JSON_CACHE_BYTES = 16 * 1024 * 1024;

/** What names a note answer's version: the key of NoteJsonCache. */
type NoteVersion = Pick<NoteViewRow, 'doc_id' | 'version'>;

/**
 * Each note's answer as UTF-8 JSON, kept by its version: the note's doc_id, never reused (a
 * note deleted and created again with the same id gets a new one), and its version, which every
 * change to the answer raises (D-NOTE-3: title, content, the tags they hold, attachments added
 * and removed). A note's entry holds the last version answered, and answers only for that
 * version, so nothing is ever stale and no write has to reach the cache; a newer version
 * replaces an older one. Collaborators are not part of the answer: who may see it is decided by
 * the list's query, not here. Kept encoded, a list of 10,000 notes is sent without encoding
 * 10 MB of text again on every request; kept by the integer doc_id, a list of 1,000 looks its
 * answers up in ~50 µs.
 */
export interface NoteJsonCache {
  get(note: NoteVersion): Buffer | undefined;
  set(note: NoteVersion, json: Buffer): void;
}

export function createNoteJsonCache(maxBytes = NOTE_JSON_CACHE_BYTES): NoteJsonCache {
  const answers = new LRUCache<number, { version: number; json: Buffer }>({
    maxSize: maxBytes,
    sizeCalculation: (answer) => answer.json.length,
  });
  return {
    get(note) {
      const answer = answers.get(note.doc_id);
      return answer?.version === note.version ? answer.json : undefined;
    },
    set(note, json) {
      answers.set(note.doc_id, { version: note.version, json });
    },
  };
}

/**
 * A note's answer as UTF-8 JSON in a buffer of its own: Buffer.from puts small ones in a shared
 * 8 KB slab, which one cached answer would keep alive after the others went.
 */
function jsonBuffer(view: Note): Buffer {
  const text = JSON.stringify(view);
  const buffer = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  buffer.write(text);
  return buffer;
}

/**
 * noteViewBatches as UTF-8 JSON, one buffer per note, for a list sent as is: the notes whose
 * version is in `cache` are not read again, the others are read in batches, serialized and
 * kept. A cached note is sent as it was when the list's ids and versions were read, so the list
 * is that moment's, like its ETag.
 */
export async function* noteJsonBatches(
  db: Db,
  userId: number,
  listed: readonly ListedNoteVersion[],
  cache: NoteJsonCache,
  personal: PersonalLookup = null,
  limits = LIST_BATCH,
): AsyncGenerator<Buffer[]> {
  for (const batch of listBatches(listed, limits)) {
    const answers: (Buffer | undefined)[] = batch.map((note) => cache.get(note));
    const missing = batch.filter((_, n) => answers[n] === undefined);
    if (missing.length > 0) {
      // Only the notes read here are checked against visibility again; see notesByIds.
      const rows = await store.notesByIds(db, userId, idsOf(missing));
      const views = await noteViews(db, rows);
      const made = new Map<string, Buffer>();
      rows.forEach((row, n) => {
        const answer = jsonBuffer(views[n]!);
        made.set(row.id, answer);
        // The row read now, which may be newer than the listed version: kept as what it is.
        cache.set(row, answer);
      });
      batch.forEach((note, n) => {
        answers[n] ??= made.get(note.id);
      });
    }
    if (personal) {
      // The reader's own fields, spliced into the shared answers (decision 0034).
      const reminders = await personal(idsOf(batch));
      batch.forEach((note, n) => {
        const answer = answers[n];
        if (answer !== undefined) answers[n] = spliceReminder(answer, reminders.get(note.id));
      });
    }
    yield answers.filter((answer) => answer !== undefined);
  }
}

/** One note's answer as UTF-8 JSON: the cached one of its version, or made now and kept. */
export async function noteJsonOf(db: Db, row: NoteRow, cache: NoteJsonCache): Promise<Buffer> {
  const cached = cache.get(row);
  if (cached !== undefined) return cached;
  const answer = jsonBuffer(await noteView(db, row));
  cache.set(row, answer);
  return answer;
}

/** Every item of the batches in one array, for callers that want the whole list. */
export async function collectBatches<T>(batches: AsyncIterable<readonly T[]>): Promise<T[]> {
  const all: T[] = [];
  for await (const batch of batches) all.push(...batch);
  return all;
}

async function noteView(db: Db, row: NoteRow): Promise<Note> {
  const relations = store.noteRelationsFast(db, row.id);
  if (relations) return noteViewOf(row, relations.tags, relations.attachments);
  const [view] = await noteViews(db, [row]);
  return view!;
}

/**
 * What a write knows of the note it stored, so that its answer does not read it back:
 * - 'inserted' (insertNote): its tags are its hashtags, exactly the names indexNote stored, and
 *   it has no attachments yet (an upload needs the note to exist, and raises the version);
 * - 'indexed' (a write of its title or content, which ran indexNote): its tags are its hashtags;
 * - 'read': neither is known.
 */
export type WrittenNote = 'inserted' | 'indexed' | 'read';

/**
 * The answer to a write of `row`. Tags are ordered as SQLite's `ORDER BY name`, by UTF-8 bytes,
 * which is code point order; PostgreSQL orders by its collation, so there they are read.
 */
export async function writtenNoteView(db: Db, row: NoteRow, written: WrittenNote): Promise<Note> {
  if (written === 'read' || engine() !== 'sqlite') return noteView(db, row);
  const tags = extractHashtags(row.title, row.content).sort(byCodePoint);
  if (written === 'inserted') return noteViewOf(row, tags, []);
  const attachments = store.attachmentRowsFast(db, row.id);
  return attachments ? noteViewOf(row, tags, attachments) : noteView(db, row);
}

/** Code point order (UTF-8 byte order); `sort()` alone orders by UTF-16 code units. */
function byCodePoint(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
