import { type DBSchema, type IDBPDatabase, type IDBPTransaction, wrap } from 'idb';
import type { NoteAcks, NoteState, OutboxEntry } from './outbox.js';
import type { ServerAttachment, ServerNote } from './types.js';

/**
 * The device's IndexedDB database, one per user (`keepsake-u<userId>`, so two people on one
 * browser never mix): server copies, the outbox, acknowledgements and the pull cursor.
 */

/**
 * Where a server copy sits in display order (model/ordering.ts compareNotes): notes, archive,
 * trash; pinned first; sortOrder; newest update; id. An index on it reads the first screen
 * without reading every note.
 */
type DisplayKey = [section: number, sortOrder: number, age: number, id: string];

/**
 * An attachment as stored: notes stored on this device before the server measured image sizes
 * lack `width` and `height` (read back as null, as the server answers an unmeasured image).
 */
type StoredAttachment = Omit<ServerAttachment, 'width' | 'height'> &
  Partial<Pick<ServerAttachment, 'width' | 'height'>>;

/** A server copy as stored: the note, and its key in display order. */
type StoredNote = Omit<ServerNote, 'attachments'> & {
  attachments: StoredAttachment[];
  display: DisplayKey;
};

export interface LocalSchema extends DBSchema {
  /** Each note exactly as the last pull returned it (docs/sync.md: never our own changes). */
  notes: { key: string; value: StoredNote; indexes: { display: DisplayKey } };
  outbox: { key: number; value: OutboxEntry; indexes: { noteId: string } };
  acks: { key: string; value: NoteAcks };
  meta: { key: string; value: number };
}

export type LocalDatabase = IDBPDatabase<LocalSchema>;
type StoreName = 'notes' | 'outbox' | 'acks' | 'meta';
export type ReadWrite = IDBPTransaction<LocalSchema, StoreName[], 'readwrite'>;

export const databaseName = (userId: string) => `keepsake-u${userId}`;
/** 1: the stores; 2: the display index on notes. */
const SCHEMA_VERSION = 2;

function displayKey(note: ServerNote): DisplayKey {
  const section = note.trashed ? 3 : note.archived ? 2 : note.pinned ? 0 : 1;
  return [section, note.sortOrder, -Date.parse(note.updatedAt), note.id];
}

export function toStored(note: ServerNote): StoredNote {
  return { ...note, display: displayKey(note) };
}

function fromStored(stored: StoredNote): ServerNote;
function fromStored(stored: StoredNote | undefined): ServerNote | undefined;
function fromStored(stored: StoredNote | undefined): ServerNote | undefined {
  if (!stored) return undefined;
  const { display: _display, attachments, ...note } = stored;
  return {
    ...note,
    attachments: attachments.map(({ width = null, height = null, ...attachment }) => ({
      ...attachment,
      width,
      height,
    })),
  };
}

/**
 * Opens (creating if needed) the user's database through the given factory. idb's openDB uses
 * the global indexedDB; taking the factory lets tests give each simulated device its own.
 * `onVersionChange`: another tab deletes the database (sign-out) or upgrades it: close.
 */
export function openLocalDatabase(
  factory: IDBFactory,
  userId: string,
  onVersionChange: () => void,
): Promise<LocalDatabase> {
  const request = factory.open(databaseName(userId), SCHEMA_VERSION);
  request.addEventListener('upgradeneeded', (event) => {
    const db = request.result;
    if (event.oldVersion < 1) {
      db.createObjectStore('notes', { keyPath: 'id' });
      db.createObjectStore('outbox', { keyPath: 'seq', autoIncrement: true }).createIndex('noteId', 'noteId');
      db.createObjectStore('acks', { keyPath: 'noteId' });
      db.createObjectStore('meta');
    }
    if (event.oldVersion < 2) {
      const notes = request.transaction!.objectStore('notes');
      notes.createIndex('display', 'display');
      // Copies stored by version 1 get their key; the upgrade's transaction holds until done.
      notes.openCursor().addEventListener('success', function addKey() {
        const cursor = this.result;
        if (!cursor) return;
        cursor.update(toStored(cursor.value));
        cursor.continue();
      });
    }
  });
  return (wrap(request) as unknown as Promise<LocalDatabase>).then((db) => {
    db.addEventListener('versionchange', () => {
      db.close();
      onVersionChange();
    });
    return db;
  });
}

/** Deletes the user's database; waits until every tab has closed it. */
export function deleteLocalDatabase(factory: IDBFactory, userId: string): Promise<void> {
  return (wrap(factory.deleteDatabase(databaseName(userId))) as unknown as Promise<unknown>).then(
    () => undefined,
  );
}

/**
 * Writes a note's new state over its old one: new entries are added (getting their seq), entries
 * no longer there are deleted, unchanged entry objects are left alone.
 */
export async function writeNoteState(tx: ReadWrite, noteId: string, before: NoteState, after: NoteState) {
  const outbox = tx.objectStore('outbox');
  const writes: Promise<unknown>[] = [];
  for (const entry of before.entries)
    if (!after.entries.includes(entry)) writes.push(outbox.delete(entry.seq!));
  const entries = after.entries.map(async (entry) => {
    if (before.entries.includes(entry)) return entry;
    const { seq, ...fields } = entry;
    return {
      ...entry,
      seq: await (seq === undefined ? outbox.add(fields as OutboxEntry) : outbox.put(entry)),
    };
  });
  if (after.server !== before.server)
    writes.push(
      after.server
        ? tx.objectStore('notes').put(toStored(after.server))
        : tx.objectStore('notes').delete(noteId),
    );
  if (after.acks !== before.acks)
    writes.push(after.acks ? tx.objectStore('acks').put(after.acks) : tx.objectStore('acks').delete(noteId));
  const [written] = await Promise.all([Promise.all(entries), ...writes]);
  return { ...after, entries: written };
}

export function writeTransaction(db: LocalDatabase): ReadWrite {
  return db.transaction(['notes', 'outbox', 'acks', 'meta'], 'readwrite');
}

/** Reads the notes, outbox and acks stores: a transaction of either mode. */
type Reading = Pick<
  IDBPTransaction<LocalSchema, ('notes' | 'outbox' | 'acks')[], IDBTransactionMode>,
  'objectStore'
>;

/** The states of many notes: the outbox and acks are read whole (they are small), notes by id. */
export async function readStates(tx: Reading, ids: Iterable<string>): Promise<Map<string, NoteState>> {
  const unique = [...new Set(ids)];
  const servers = await Promise.all(unique.map((id) => tx.objectStore('notes').get(id)));
  return statesOf(
    tx,
    unique.map((id, index) => [id, fromStored(servers[index])]),
  );
}

/** The state of every note on the device, the notes read in one request. */
export async function readAllStates(tx: Reading): Promise<Map<string, NoteState>> {
  const servers = await tx.objectStore('notes').getAll();
  return statesOf(
    tx,
    servers.map((stored) => [stored.id, fromStored(stored)]),
    true,
  );
}

/**
 * The given server copies with their outbox entries (in seq order) and acknowledgements; with
 * `andOutbox`, also the notes that exist only in the outbox (created here, not pushed yet).
 */
async function statesOf(
  tx: Reading,
  servers: [string, ServerNote | undefined][],
  andOutbox = false,
): Promise<Map<string, NoteState>> {
  const [entries, acks] = await Promise.all([
    tx.objectStore('outbox').getAll(),
    tx.objectStore('acks').getAll(),
  ]);
  const states = new Map<string, NoteState>();
  for (const [id, server] of servers) states.set(id, { server, entries: [] });
  for (const entry of entries) {
    if (andOutbox && !states.has(entry.noteId)) states.set(entry.noteId, { entries: [] });
    states.get(entry.noteId)?.entries.push(entry);
  }
  for (const ack of acks) {
    const state = states.get(ack.noteId);
    if (state) state.acks = ack;
  }
  return states;
}

/**
 * Another person signs in on this browser (docs/webapp.md "Shared computers"): the user's
 * database keeps only the changes the server does not have yet (the outbox), hidden until they
 * sign in again, when a pull from the start brings the server copies back. Without any, the
 * database goes. Answers how many notes have changes kept.
 */
export async function keepOnlyUnsynced(factory: IDBFactory, userId: string): Promise<number> {
  const db = await openLocalDatabase(factory, userId, () => undefined);
  let waiting = 0;
  try {
    const tx = db.transaction(['notes', 'outbox', 'acks', 'meta'], 'readwrite');
    waiting = notesIn(await tx.objectStore('outbox').getAll());
    if (waiting > 0) {
      await Promise.all(['notes', 'acks', 'meta'].map((store) => tx.objectStore(store as 'notes').clear()));
    }
    await tx.done;
  } finally {
    db.close();
  }
  if (waiting === 0) await deleteLocalDatabase(factory, userId);
  return waiting;
}

function notesIn(entries: OutboxEntry[]): number {
  return new Set(entries.map((entry) => entry.noteId)).size;
}

/** How many notes have changes the server does not have yet, without loading any note. */
export async function countUnsynced(factory: IDBFactory, userId: string): Promise<number> {
  const db = await openLocalDatabase(factory, userId, () => undefined);
  try {
    return notesIn(await db.getAll('outbox'));
  } finally {
    db.close();
  }
}
