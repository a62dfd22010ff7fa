import { randomUUID } from 'node:crypto';
import type { Actor } from '../../actor.js';
import { requireWriteScope } from '../../actor.js';
import { type Clock, iso } from '../../clock.js';
import type { Db } from '../../db/connection.js';
import { errors } from '../../errors.js';
import { recordRevision } from '../revisions/service.js';
import { indexText } from '../search/searchText.js';
import { extractHashtags } from '../tags/hashtags.js';
import {
  appendText,
  type ChecklistItem,
  type ChecklistSelector,
  checklistItems,
  pickChecklistItem,
  setItemChecked,
} from './contentEdits.js';
import { requireNoteAccess } from './permissions.js';
import {
  type Attachment,
  type ListNotesQuery,
  MAX_CONTENT_LENGTH,
  type Note,
  type NoteColor,
  type NoteInput,
} from './schemas.js';
import type { AttachmentRow, ListedNote, NoteRow, NoteViewRow } from './store.js';
import * as store from './store.js';

/** The NoteInput fields that a client sets, and the columns that hold them. */
export const NOTE_FIELDS = {
  title: 'title',
  content: 'content',
  color: 'color',
  pinned: 'pinned',
  archived: 'archived',
  trashed: 'trashed',
  checklistMode: 'checklist_mode',
  sortOrder: 'sort_order',
} as const;
export type NoteField = keyof typeof NOTE_FIELDS;
export type NoteFields = Required<Omit<NoteInput, 'id'>>;
export const NOTE_FIELD_NAMES = Object.keys(NOTE_FIELDS) as NoteField[];

const DEFAULTS: NoteFields = {
  title: '',
  content: '',
  color: 'default',
  pinned: false,
  archived: false,
  trashed: false,
  checklistMode: false,
  sortOrder: 0,
}; // D-NOTE-1

/** Called after a transaction that deleted notes has committed, e.g. to remove attachment files. */
export type NotesDeletedListener = (attachments: AttachmentRow[]) => Promise<void>;

export interface NotesDeps {
  db: Db;
  clock: Clock;
  trashRetentionDays: number;
  notesDeleted: NotesDeletedListener[];
}

/** When and at which version each field last changed (D-SYNC-5, D-SYNC-8); see migration 0003. */
export interface FieldHistory {
  stampedAt: Record<NoteField, number>;
  version: Record<NoteField, number>;
}

export function fieldHistory(note: NoteRow): FieldHistory {
  const clock = JSON.parse(note.field_clock) as Partial<Record<NoteField, number>>;
  const versions = JSON.parse(note.field_versions) as Partial<Record<NoteField, number>>;
  const history: FieldHistory = {
    stampedAt: {} as FieldHistory['stampedAt'],
    version: {} as FieldHistory['version'],
  };
  for (const field of NOTE_FIELD_NAMES) {
    history.stampedAt[field] = clock[field] ?? 0;
    history.version[field] = versions[field] ?? 1;
  }
  return history;
}

/** A field clock stamp: one time for every field, or a time per field. */
export type FieldStamp = number | ((field: NoteField) => number);
const stampOf = (stamp: FieldStamp, field: NoteField) => (typeof stamp === 'function' ? stamp(field) : stamp);

export function fieldValue(note: NoteRow, field: NoteField): NoteFields[NoteField] {
  const raw = note[NOTE_FIELDS[field]];
  if (field === 'title' || field === 'content' || field === 'color' || field === 'sortOrder')
    return raw as never;
  return raw === 1;
}

export function fieldValues(note: NoteRow): NoteFields {
  return Object.fromEntries(NOTE_FIELD_NAMES.map((f) => [f, fieldValue(note, f)])) as NoteFields;
}

export function attachmentView(row: AttachmentRow): Attachment {
  return {
    id: row.id,
    noteId: row.note_id,
    filename: row.filename,
    mimeType: row.mime_type,
    size: row.size,
    thumbnailPath: row.thumbnail_path,
    createdAt: iso(row.created_at),
  };
}

/** Note responses with tags and attachments: two queries whatever the number of notes. */
export async function noteViews(db: Db, rows: readonly NoteViewRow[]): Promise<Note[]> {
  const ids = rows.map((r) => r.id);
  const [tags, attachments] = await Promise.all([
    store.tagsByNote(db, ids),
    store.attachmentsByNote(db, ids),
  ]);
  return rows.map((row) => ({
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
    tags: tags.get(row.id) ?? [],
    attachments: (attachments.get(row.id) ?? []).map(attachmentView),
  }));
}

/**
 * How much of a streamed list is read per database round: at most this many notes, and at most
 * this many bytes of title and content (a note larger than that is read alone). Counted notes
 * alone let 500 notes of 1 MB each be one 500 MB round; see docs/decisions/0004-streamed-lists.md.
 */
export const LIST_BATCH = { notes: 500, bytes: 4 * 1024 * 1024 };

/** `listed` cut into consecutive runs of at most `limits.notes` notes and `limits.bytes` bytes. */
export function* listBatches(
  listed: readonly ListedNote[],
  limits: { notes: number; bytes: number } = LIST_BATCH,
): Generator<string[]> {
  let batch: string[] = [];
  let bytes = 0;
  for (const note of listed) {
    if (batch.length > 0 && (batch.length === limits.notes || bytes + note.bytes > limits.bytes)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(note.id);
    bytes += note.bytes;
  }
  if (batch.length > 0) yield batch;
}

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
  for (const ids of listBatches(listed, limits)) {
    yield noteViews(db, await store.notesByIds(db, userId, ids));
  }
}

/** Every item of the batches in one array, for callers that want the whole list. */
export async function collectBatches<T>(batches: AsyncIterable<readonly T[]>): Promise<T[]> {
  const all: T[] = [];
  for await (const batch of batches) all.push(...batch);
  return all;
}

export async function noteView(db: Db, row: NoteRow): Promise<Note> {
  const [view] = await noteViews(db, [row]);
  return view!;
}

function columns(values: Partial<NoteFields>): Partial<NoteRow> {
  const out: Record<string, unknown> = {};
  for (const field of NOTE_FIELD_NAMES) {
    const value = values[field];
    if (value === undefined) continue;
    out[NOTE_FIELDS[field]] = typeof value === 'boolean' ? Number(value) : value;
  }
  return out as Partial<NoteRow>;
}

/** Only the NoteInput fields, so a whole Note sent back by a client is accepted (D-NOTE-2). */
export function pickNoteFields(input: NoteInput): Partial<NoteFields> {
  const out: Partial<NoteFields> = {};
  for (const field of NOTE_FIELD_NAMES) {
    if (input[field] !== undefined) (out as Record<string, unknown>)[field] = input[field];
  }
  return out;
}

/** Tags (D-TAG-2) and search document of a note; a note just inserted has no tags to compare. */
async function indexNote(db: Db, note: NoteRow, inserted: boolean): Promise<void> {
  const tags = extractHashtags(note.title, note.content);
  if (inserted) await store.addNoteTags(db, note.id, tags);
  else await store.replaceNoteTags(db, note.id, tags);
  await store.writeSearchDocument(db, note.doc_id, {
    title: indexText(note.title),
    content: indexText(note.content),
    tags: indexText(tags.join(' ')),
  });
}

/**
 * Inserts a note for `ownerId`, written by `authorId` (who differs for a conflict copy of a
 * collaborator's push). Every field is stamped in the field clock with `stampedAt` (the server
 * clock for REST and MCP; for sync the change's timestamp, and 0 for defaulted fields so that
 * any later-arriving change may set them). Version 1 is its first revision (D-SYNC-9).
 */
export async function insertNote(
  db: Db,
  input: {
    ownerId: number;
    authorId: number;
    id: string;
    values: Partial<NoteFields>;
    now: number;
    stampedAt: FieldStamp;
    /** An imported note's original creation time; otherwise `now`. */
    createdAt?: number;
  },
): Promise<NoteRow> {
  const values = { ...DEFAULTS, ...input.values };
  const clock = Object.fromEntries(NOTE_FIELD_NAMES.map((f) => [f, stampOf(input.stampedAt, f)]));
  const row = await store.insertNote(db, {
    id: input.id,
    owner_id: input.ownerId,
    title: values.title,
    content: values.content,
    color: values.color,
    pinned: Number(values.pinned),
    archived: Number(values.archived),
    trashed: Number(values.trashed),
    checklist_mode: Number(values.checklistMode),
    sort_order: values.sortOrder,
    trashed_at: values.trashed ? input.now : null,
    created_at: input.createdAt ?? input.now,
    updated_at: input.now,
    version: 1,
    field_clock: JSON.stringify(clock),
    field_versions: JSON.stringify(Object.fromEntries(NOTE_FIELD_NAMES.map((f) => [f, 1]))),
  });
  await indexNote(db, row, true);
  await recordRevision(db, row, input.authorId, input.now);
  return row;
}

/** One write of note fields: when the server stores it, the field stamp it carries, and by whom. */
export interface NoteWrite {
  now: number;
  stampedAt: FieldStamp;
  authorId: number;
}

/**
 * Writes `values` to the note. Every field written takes the write's stamp, whether or not its
 * value changes (D-SYNC-5: an older write arriving later must lose to it). Only the fields that
 * differ are stored as a change: version + 1 and a new updatedAt that never goes backwards
 * (D-NOTE-3, D-SYNC-2); trashedAt follows trashed (D-NOTE-4); tags, the search document and a
 * revision follow title and content (D-TAG-2, D-SYNC-9). A write that changes no value keeps
 * version and updatedAt and stores only the stamps.
 */
export async function applyNoteFields(
  db: Db,
  note: NoteRow,
  values: Partial<NoteFields>,
  write: NoteWrite,
): Promise<{ note: NoteRow; changed: NoteField[] }> {
  const written = NOTE_FIELD_NAMES.filter((f) => values[f] !== undefined);
  const changed = written.filter((f) => values[f] !== fieldValue(note, f));
  const clock = JSON.parse(note.field_clock) as Record<string, number>;
  for (const field of written) clock[field] = stampOf(write.stampedAt, field);
  const fieldClock = JSON.stringify(clock);
  if (changed.length === 0) {
    if (fieldClock === note.field_clock) return { note, changed };
    return { note: await store.updateNote(db, note.id, { field_clock: fieldClock }), changed };
  }
  const changes = Object.fromEntries(changed.map((f) => [f, values[f]])) as Partial<NoteFields>;
  const version = note.version + 1;
  const versions = JSON.parse(note.field_versions) as Record<string, number>;
  for (const field of changed) versions[field] = version;
  const patch: Partial<NoteRow> = {
    ...columns(changes),
    version,
    updated_at: Math.max(write.now, note.updated_at),
    field_clock: fieldClock,
    field_versions: JSON.stringify(versions),
  };
  if (changes.trashed !== undefined) patch.trashed_at = changes.trashed ? write.now : null;
  const updated = await store.updateNote(db, note.id, patch);
  if (changes.title !== undefined || changes.content !== undefined) {
    await indexNote(db, updated, false);
    await recordRevision(db, updated, write.authorId, write.now);
  }
  return { note: updated, changed };
}

/** Stores a stored change that touched no NoteInput field, e.g. an attachment added (D-ATT-5). */
export async function bumpNoteVersion(db: Db, note: NoteRow, now: number): Promise<NoteRow> {
  return store.updateNote(db, note.id, {
    version: note.version + 1,
    updated_at: Math.max(now, note.updated_at),
  });
}

/**
 * Deletes notes for good, leaving a tombstone for everyone who could see them (D-SYNC-3).
 * Returns removed attachment rows; pass them to `notifyDeleted` after the commit.
 */
export async function deleteNotesForGood(
  db: Db,
  notes: readonly NoteRow[],
  now: number,
): Promise<AttachmentRow[]> {
  await store.recordTombstones(db, await store.usersWithAccess(db, notes), now);
  return store.deleteNotes(db, notes);
}

/**
 * The version `If-Match` asks for (D-NOTE-3); undefined for none, and for `*`, which matches any
 * current version (RFC 9110 §13.1.1): the note must exist, which every write checks anyway.
 */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const match = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(header);
  if (!match) throw errors.invalidIfMatch();
  return Number(match[1]);
}

function checkVersion(note: NoteRow, expected: number | undefined): void {
  if (expected !== undefined && expected !== note.version) throw errors.versionMismatch(note.version);
}

function checkContentLength(content: string): void {
  if (content.length > MAX_CONTENT_LENGTH) {
    throw errors.invalidField('/content', `must be at most ${MAX_CONTENT_LENGTH} characters`);
  }
}

function checklistProblem(problem: 'no_items' | 'not_found' | 'ambiguous', candidates: ChecklistItem[]) {
  const listed = candidates.map((i) => `${i.index}: ${i.text}`).join('; ');
  if (problem === 'no_items') {
    return errors.checklistItemNotFound('The note has no checklist items (- [ ] lines)');
  }
  if (problem === 'ambiguous') {
    return errors.checklistItemAmbiguous(`Several checklist items match: ${listed}`);
  }
  return errors.checklistItemNotFound(`No such checklist item; the items are ${listed}`);
}

/**
 * Where an imported note came from (docs/backup.md): it keeps its original creation time, and
 * its fields are stamped with its original edit time, so that any later edit from a device wins
 * over the imported values (D-SYNC-5). updatedAt is still the server's clock (D-SYNC-2).
 */
export interface NoteOrigin {
  createdAt?: number;
  editedAt?: number;
}

/** Extra narrowing for lists beyond the REST query (D-MCP-3 list_notes). */
export interface ListNotesOptions extends ListNotesQuery {
  pinned?: boolean;
  limit?: number;
}

/** One page of a list, and the cursor of the next page (null after the last one). */
export interface NotePage {
  notes: Note[];
  nextCursor: string | null;
}

/** The cursor after `note`: its sort key as base64url JSON, opaque to clients. */
function listCursorAfter(note: Note): string {
  const key = [note.pinned, note.sortOrder, Date.parse(note.updatedAt), note.id];
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

function parseListCursor(cursor: string): store.ListPosition {
  try {
    const [pinned, sortOrder, updatedAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      typeof pinned === 'boolean' &&
      Number.isSafeInteger(sortOrder) &&
      Number.isSafeInteger(updatedAt) &&
      typeof id === 'string'
    ) {
      return { pinned, sortOrder, updatedAt, id };
    }
  } catch {
    // Not base64url JSON: the same answer as a well-formed cursor of the wrong shape.
  }
  throw errors.invalidCursor();
}

function listFilter(query: ListNotesOptions): store.ListFilter {
  return {
    filter: query.filter ?? 'all',
    tag: query.tag?.toLowerCase(),
    color: query.color,
    pinned: query.pinned,
    limit: query.limit,
  };
}

export function createNotesService(deps: NotesDeps) {
  const { db, clock } = deps;

  /** Stores the fields that `compute` derives from the current note, in one transaction. */
  async function updateWith(
    actor: Actor,
    noteId: string,
    compute: (note: NoteRow) => Partial<NoteFields>,
    ifMatch?: number,
  ): Promise<Note> {
    const row = await db.transaction().execute(async (trx) => {
      const { note } = await requireNoteAccess(trx, actor, noteId, 'edit');
      checkVersion(note, ifMatch);
      const now = clock.now();
      const write = { now, stampedAt: now, authorId: actor.userId };
      return (await applyNoteFields(trx, note, compute(note), write)).note;
    });
    return noteView(db, row);
  }

  /**
   * The list as batches of notes, for streaming it (GET /api/notes). The ids, and so the order,
   * are read now; each batch's notes when the batch is asked for.
   */
  async function listInBatches(actor: Actor, query: ListNotesOptions): Promise<AsyncIterable<Note[]>> {
    const listed = await store.listNotes(db, actor.userId, listFilter(query));
    return noteViewBatches(db, actor.userId, listed);
  }

  async function notifyDeleted(attachments: AttachmentRow[]): Promise<void> {
    if (attachments.length === 0) return;
    for (const listener of deps.notesDeleted) await listener(attachments);
  }

  return {
    listInBatches,

    async list(actor: Actor, query: ListNotesOptions): Promise<Note[]> {
      return collectBatches(await listInBatches(actor, query));
    },

    /**
     * `limit` notes of the list, starting after the note `cursor` names (keyset paging, so
     * notes added or removed meanwhile do not shift the pages).
     */
    async listPage(
      actor: Actor,
      query: ListNotesOptions & { limit: number },
      cursor?: string,
    ): Promise<NotePage> {
      const after = cursor === undefined ? undefined : parseListCursor(cursor);
      // One more than asked for tells whether there is a next page.
      const listed = await store.listNotes(db, actor.userId, {
        ...listFilter(query),
        limit: query.limit + 1,
        after,
      });
      const notes = await collectBatches(noteViewBatches(db, actor.userId, listed.slice(0, query.limit)));
      const last = notes.at(-1);
      return { notes, nextCursor: listed.length > query.limit && last ? listCursorAfter(last) : null };
    },

    async get(actor: Actor, noteId: string): Promise<Note> {
      const { note } = await requireNoteAccess(db, actor, noteId, 'read');
      return noteView(db, note);
    },

    async create(actor: Actor, input: NoteInput, origin: NoteOrigin = {}): Promise<Note> {
      requireWriteScope(actor);
      const id = (input.id ?? randomUUID()).toLowerCase();
      const row = await db.transaction().execute(async (trx) => {
        if (await store.noteExists(trx, id)) throw errors.noteExists();
        const now = clock.now();
        return insertNote(trx, {
          ownerId: actor.userId,
          authorId: actor.userId,
          id,
          values: pickNoteFields(input),
          now,
          createdAt: origin.createdAt === undefined ? undefined : Math.min(origin.createdAt, now),
          stampedAt: Math.min(origin.editedAt ?? now, now),
        });
      });
      return noteView(db, row);
    },

    async update(actor: Actor, noteId: string, input: NoteInput, ifMatch?: number): Promise<Note> {
      return updateWith(actor, noteId, () => pickNoteFields(input), ifMatch);
    },

    /** Adds text at the end of the content, on a new line. */
    async appendContent(actor: Actor, noteId: string, text: string): Promise<Note> {
      return updateWith(actor, noteId, (note) => {
        const content = appendText(note.content, text);
        checkContentLength(content);
        return { content };
      });
    },

    /** Ticks or unticks one `- [ ]` line, chosen by position or text; nothing else changes. */
    async setChecklistItem(
      actor: Actor,
      noteId: string,
      selector: ChecklistSelector,
      checked: boolean,
    ): Promise<{ note: Note; item: ChecklistItem }> {
      let picked: ChecklistItem | undefined;
      const note = await updateWith(actor, noteId, (current) => {
        const pick = pickChecklistItem(checklistItems(current.content), selector);
        if ('problem' in pick) throw checklistProblem(pick.problem, pick.candidates);
        picked = pick.found;
        return { content: setItemChecked(current.content, pick.found, checked) };
      });
      return { note, item: { ...picked!, checked } };
    },

    /** Deletes for good (owner only); with `onlyFromTrash`, only a note already in the trash. */
    async remove(
      actor: Actor,
      noteId: string,
      ifMatch?: number,
      options: { onlyFromTrash?: boolean } = {},
    ): Promise<void> {
      const removed = await db.transaction().execute(async (trx) => {
        const { note } = await requireNoteAccess(trx, actor, noteId, 'own');
        checkVersion(note, ifMatch);
        if (options.onlyFromTrash && note.trashed !== 1) {
          throw errors.noteNotTrashed();
        }
        return deleteNotesForGood(trx, [note], clock.now());
      });
      await notifyDeleted(removed);
    },

    /** Deletes notes trashed longer than the retention period (D-NOTE-4); returns how many. */
    async purgeExpiredTrash(): Promise<number> {
      if (deps.trashRetentionDays === 0) return 0;
      const now = clock.now();
      const before = now - deps.trashRetentionDays * 86_400_000;
      const { count, removed } = await db.transaction().execute(async (trx) => {
        const expired = await store.expiredTrash(trx, before);
        return { count: expired.length, removed: await deleteNotesForGood(trx, expired, now) };
      });
      await notifyDeleted(removed);
      return count;
    },

    notifyDeleted,
  };
}

export type NotesService = ReturnType<typeof createNotesService>;
