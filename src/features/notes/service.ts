import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Actor } from '../../actor.js';
import { requireWriteScope } from '../../actor.js';
import type { Clock } from '../../clock.js';
import { engine } from '../../db/dialect.js';
import { transaction } from '../../db/transaction.js';
import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import { joinJsonArray } from '../../jsonArrays.js';
import type { AttachmentRow } from '../../model/attachments.js';
import { notesToDeleteBySystemRule, readableNoteVersion, requireNoteAccess } from '../../model/noteAccess.js';
import {
  collectBatches,
  createNoteJsonCache,
  type NoteJsonCache,
  noteJsonBatches,
  noteJsonOf,
  noteViewBatches,
  type WrittenNote,
  writtenNoteView,
} from '../../model/noteAnswers.js';
import { type NoteFields, pickNoteFields } from '../../model/noteFields.js';
import type { ListedNoteVersion, NoteRow } from '../../model/notes.js';
import * as store from '../../model/notes.js';
import { applyNoteFields, deleteNotesForGood, insertNote } from '../../model/noteWrites.js';
import { type PersonalFields, type PersonalLookup, spliceReminder } from '../../model/personal.js';
import { MAX_CONTENT_LENGTH } from '../../shared/api/limits.js';
import type { Note, NoteInput } from '../../shared/api/notes.js';
import { newNoteId } from '../../shared/noteIds.js';
import {
  appendText,
  type ChecklistItem,
  type ChecklistSelector,
  checklistItems,
  checklistProblem,
  pickChecklistItem,
  setItemChecked,
} from './contentEdits.js';
import type { ListNotesQuery } from './schemas.js';

/**
 * Whole answers of kept lists (decision 0027, "Whole answers"): a list of at most
 * KEPT_LIST_BYTES, asked again while the database is unchanged, is sent from one buffer.
 * KEPT_LISTS_BYTES and KEPT_LISTS in all, least recently used out first: the count bounds the
 * lists that cost little each (an empty list is 2 bytes, and a tag filter can name any word).
 */
const KEPT_LIST_BYTES = 1024 * 1024;
const KEPT_LISTS_BYTES = 8 * 1024 * 1024;
const KEPT_LISTS = 1_000;

/** What a listed note's answer adds to its text's bytes, about: its other fields (a guess on the safe side). */
const ANSWER_FIELD_BYTES = 400;

/** Whether a list's answer is small enough to be kept whole (KEPT_LIST_BYTES). */
function mayKeepWhole(listed: readonly ListedNoteVersion[]): boolean {
  let bytes = 0;
  for (const note of listed) {
    bytes += note.bytes + ANSWER_FIELD_BYTES;
    if (bytes > KEPT_LIST_BYTES) return false;
  }
  return true;
}

/** Called after a transaction that deleted notes has committed, e.g. to remove attachment files. */
type NotesDeletedListener = (attachments: AttachmentRow[]) => Promise<void>;

interface NotesDeps {
  db: Db;
  clock: Clock;
  trashRetentionDays: number;
  notesDeleted: NotesDeletedListener[];
  /** Note answers kept by version for the list (model/noteAnswers.ts); default: one of its own. */
  noteJson?: NoteJsonCache;
  /** The reader's own fields of each answer (the reminder); default: none. */
  personal?: PersonalFields;
}

function checkVersion(note: NoteRow, expected: number | undefined): void {
  if (expected !== undefined && expected !== note.version) throw errors.versionMismatch(note.version);
}

function checkContentLength(content: string): void {
  if (content.length > MAX_CONTENT_LENGTH) {
    throw errors.invalidField('/content', `must be at most ${MAX_CONTENT_LENGTH} characters`);
  }
}

/**
 * Where an imported note came from (docs/backup.md): it keeps its original creation time, and
 * its fields are stamped with its original edit time, so that any later edit from a device wins
 * over the imported values (D-SYNC-5). updatedAt is still the server's clock (D-SYNC-2).
 */
interface NoteOrigin {
  createdAt?: number;
  editedAt?: number;
}

/** Extra narrowing for lists beyond the REST query (D-MCP-3 list_notes). */
interface ListNotesOptions extends ListNotesQuery {
  pinned?: boolean;
  limit?: number;
}

/** One page of a list, and the cursor of the next page (null after the last one). */
interface NotePage {
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
  const noteJson = deps.noteJson ?? createNoteJsonCache();
  const listEtags = new WeakMap<readonly ListedNoteVersion[], string>();
  /** Kept lists answered once: the second answer of one is joined and kept (keptListAnswers). */
  const answeredLists = new WeakSet<readonly ListedNoteVersion[]>();
  const keptListAnswers = new LRUCache<readonly ListedNoteVersion[], { stamp: string | null; json: Buffer }>({
    max: KEPT_LISTS,
    maxSize: KEPT_LISTS_BYTES,
    sizeCalculation: (kept) => kept.json.length,
  });
  const { personal } = deps;

  /** The reader's personal fields for answers, and what names their state (null: none). */
  async function personalOf(userId: number): Promise<{ stamp: string | null; lookup: PersonalLookup }> {
    const stamp = personal ? await personal.stamp(db, userId) : null;
    if (!personal || stamp === null) return { stamp, lookup: null };
    return { stamp, lookup: (ids) => personal.of(db, userId, ids) };
  }

  /** `notes` with the reader's own fields filled in (noteViewOf leaves them null). */
  async function forReader<N extends readonly Note[]>(userId: number, notes: N): Promise<N> {
    const { lookup } = await personalOf(userId);
    if (lookup === null || notes.length === 0) return notes;
    const reminders = await lookup(notes.map((note) => note.id));
    for (const note of notes) note.reminder = reminders.get(note.id) ?? null;
    return notes;
  }

  /** The reader's own fields of one note's answer (forReader for one note, in one point read). */
  async function reminderOf(userId: number, noteId: string) {
    return personal ? personal.ofNote(db, userId, noteId) : undefined;
  }

  /** The note's answer for this reader; `written`: what the write that stored `row` knows of it. */
  async function viewFor(userId: number, row: NoteRow, written: WrittenNote = 'read'): Promise<Note> {
    const view = await writtenNoteView(db, row, written);
    view.reminder = (await reminderOf(userId, row.id)) ?? null;
    return view;
  }

  /** Stores the writer's own fields that `input` sets, in the note's write transaction. */
  async function writePersonal(trx: Db, actor: Actor, noteId: string, input: NoteInput, now: number) {
    await personal?.write(trx, actor.userId, noteId, input, now, now);
  }

  /** Stores the fields that `compute` derives from the current note, in one transaction. */
  async function updateWith(
    actor: Actor,
    noteId: string,
    compute: (note: NoteRow) => Partial<NoteFields>,
    ifMatch?: number,
    input: NoteInput = {},
  ): Promise<Note> {
    const written = await transaction(
      db,
      async (trx) => {
        const { note } = await requireNoteAccess(trx, actor, noteId, 'edit');
        checkVersion(note, ifMatch);
        const now = clock.now();
        const write = { now, stampedAt: now, authorId: actor.userId };
        await writePersonal(trx, actor, note.id, input, now);
        return applyNoteFields(trx, note, compute(note), write);
      },
      { group: true },
    );
    const indexed = written.changed.includes('title') || written.changed.includes('content');
    return viewFor(actor.userId, written.note, indexed ? 'indexed' : 'read');
  }

  /** The list as batches of notes; the ids, and so the order, are read now, each batch's notes when asked for. */
  async function listInBatches(actor: Actor, query: ListNotesOptions): Promise<AsyncIterable<Note[]>> {
    const listed = await store.listNotes(db, actor.userId, listFilter(query));
    const batches = noteViewBatches(db, actor.userId, listed);
    return (async function* () {
      for await (const batch of batches) yield forReader(actor.userId, batch);
    })();
  }

  /**
   * A list's ETag: a hash of its notes' doc_ids and versions in list order, what names each
   * answer (NoteJsonCache). A kept list (store.listNotes) is the same array each time, so it is
   * hashed once; as one text, since an update per note cost more than the hash.
   */
  function listEtag(listed: readonly ListedNoteVersion[]): string {
    let etag = listEtags.get(listed);
    if (etag === undefined) {
      const versions = listed.map((note) => `${note.doc_id}:${note.version}`).join(',');
      etag = `"list-${createHash('sha256').update(versions).digest('base64url')}"`;
      listEtags.set(listed, etag);
    }
    return etag;
  }

  /**
   * Each listed note's answer as UTF-8 JSON, in batches (noteJsonBatches), for REST to send as
   * is, with the reader's own fields (`lookup`, read once per list: personalOf).
   */
  function answersAsJson(
    actor: Actor,
    listed: readonly ListedNoteVersion[],
    lookup: PersonalLookup,
  ): AsyncIterable<Buffer[]> {
    return noteJsonBatches(db, actor.userId, listed, noteJson, lookup);
  }

  /**
   * The list as batches of each note's answer as UTF-8 JSON (noteJsonBatches), for streaming it
   * (GET /api/notes), and its ETag (listEtag), read before any note is. A note's answer changes
   * only with its version (D-NOTE-3: every change to a field, tags and attachments included,
   * raises it), so an unchanged ETag means an unchanged list, and a conditional GET can be
   * answered 304 without reading the notes.
   */
  async function listAsJson(
    actor: Actor,
    query: ListNotesOptions,
  ): Promise<{ etag: string; json: () => Promise<Buffer | AsyncIterable<Buffer[]>> }> {
    const listed = await store.listNotes(db, actor.userId, listFilter(query));
    // The reader's reminders are part of the answers but not of the notes' versions: their
    // stamp joins the ETag (decision 0034).
    const { stamp, lookup } = await personalOf(actor.userId);
    const etag = listEtag(listed);
    return {
      etag: stamp === null ? etag : `${etag.slice(0, -1)}-r${stamp}"`,
      json: () => listJson(actor, listed, stamp, lookup),
    };
  }

  /**
   * A list's answer: the whole array in one buffer when the list was kept (store.listNotes
   * answers the same array while the database is unchanged) and answered before, else its
   * notes in batches. Only a list answered a second time is joined and kept, so a server whose
   * lists change between requests makes no copies nobody reads again.
   */
  async function listJson(
    actor: Actor,
    listed: readonly ListedNoteVersion[],
    stamp: string | null,
    lookup: PersonalLookup,
  ): Promise<Buffer | AsyncIterable<Buffer[]>> {
    const kept = keptListAnswers.get(listed);
    if (kept?.stamp === stamp) return kept.json;
    const batches = answersAsJson(actor, listed, lookup);
    if (engine() !== 'sqlite' || !answeredLists.has(listed) || !mayKeepWhole(listed)) {
      answeredLists.add(listed);
      return batches;
    }
    const json = joinJsonArray(await collectBatches(batches));
    keptListAnswers.set(listed, { stamp, json });
    return json;
  }

  async function notifyDeleted(attachments: AttachmentRow[]): Promise<void> {
    if (attachments.length === 0) return;
    for (const listener of deps.notesDeleted) await listener(attachments);
  }

  return {
    listInBatches,
    listAsJson,
    answersAsJson,
    personalOf,
    forReader,

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
      const notes = await forReader(
        actor.userId,
        await collectBatches(noteViewBatches(db, actor.userId, listed.slice(0, query.limit))),
      );
      const last = notes.at(-1);
      return { notes, nextCursor: listed.length > query.limit && last ? listCursorAfter(last) : null };
    },

    async get(actor: Actor, noteId: string): Promise<Note> {
      const { note } = await requireNoteAccess(db, actor, noteId, 'read');
      return viewFor(actor.userId, note);
    },

    /**
     * get's answer as UTF-8 JSON, for REST: the list's cached answer of this version when there
     * is one (the cache knows no reader, so the access decision comes first, as in get).
     */
    async getJson(actor: Actor, noteId: string): Promise<{ version: number; json: Buffer }> {
      // The version the reader may read, kept, with its answer kept: then no statement runs.
      const kept = readableNoteVersion(db, actor, noteId);
      let json = kept && noteJson.get(kept.readable);
      let version = kept?.readable.version ?? 0;
      if (!json) {
        const note = kept?.note ?? (await requireNoteAccess(db, actor, noteId, 'read')).note;
        json = await noteJsonOf(db, note, noteJson);
        version = note.version;
      }
      return { version, json: spliceReminder(json, await reminderOf(actor.userId, noteId.toLowerCase())) };
    },

    async create(actor: Actor, input: NoteInput, origin: NoteOrigin = {}): Promise<Note> {
      requireWriteScope(actor);
      const id = (input.id ?? newNoteId()).toLowerCase();
      const row = await transaction(
        db,
        async (trx) => {
          // Only a client's id can be taken: a new UUID v7 has 74 random bits within its millisecond.
          if (input.id !== undefined && (await store.noteExists(trx, id))) throw errors.noteExists();
          const now = clock.now();
          const created = await insertNote(trx, {
            ownerId: actor.userId,
            authorId: actor.userId,
            id,
            values: pickNoteFields(input),
            now,
            createdAt: origin.createdAt === undefined ? undefined : Math.min(origin.createdAt, now),
            stampedAt: Math.min(origin.editedAt ?? now, now),
          });
          await writePersonal(trx, actor, id, input, now);
          return created;
        },
        { group: true },
      );
      return viewFor(actor.userId, row, 'inserted');
    },

    async update(actor: Actor, noteId: string, input: NoteInput, ifMatch?: number): Promise<Note> {
      return updateWith(actor, noteId, () => pickNoteFields(input), ifMatch, input);
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
      // Alone: a delete for good is rare next to creates and edits, which group commit is for (0025).
      const removed = await transaction(
        db,
        async (trx) => {
          const { note } = await requireNoteAccess(trx, actor, noteId, 'own');
          checkVersion(note, ifMatch);
          if (options.onlyFromTrash && note.trashed !== 1) {
            throw errors.noteNotTrashed();
          }
          return deleteNotesForGood(trx, [note], clock.now());
        },
        { group: false },
      );
      await notifyDeleted(removed);
    },

    /** Deletes notes trashed longer than the retention period (D-NOTE-4); returns how many. */
    async purgeExpiredTrash(): Promise<number> {
      if (deps.trashRetentionDays === 0) return 0;
      // Alone: the hourly purge may delete many notes, a long transaction a group would wait behind.
      const { count, removed } = await transaction(
        db,
        async (trx) => {
          // Read inside the transaction: the tombstones' time must follow the sync cursor (0016).
          const now = clock.now();
          const before = now - deps.trashRetentionDays * 86_400_000;
          const expired = await store.expiredTrash(trx, before);
          const removed = await deleteNotesForGood(trx, notesToDeleteBySystemRule(expired), now);
          return { count: expired.length, removed };
        },
        { group: false },
      );
      await notifyDeleted(removed);
      return count;
    },

    notifyDeleted,
  };
}

export type NotesService = ReturnType<typeof createNotesService>;
