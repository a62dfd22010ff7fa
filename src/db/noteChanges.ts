/**
 * What each write transaction changed, handed on once it has committed (issue 28, decision
 * 0033): the live streams (features/live) hint at it. The writes record into their transaction
 * (noteChanged, accessEnded: a few calls in the note writes, tombstones and collaborators), and
 * the one place a transaction ends (`transaction` here, writeTransaction in groupCommit.ts) hands
 * the record to the database's listener after COMMIT. A transaction that rolls back hands on
 * nothing: its record is dropped with it. With no listener (the commands), recording is a
 * WeakMap lookup.
 */
import type { Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { Db } from './types.js';

/** A note some user could see until this transaction (deleted, or their access ended). */
export interface EndedAccess {
  noteId: string;
  userId: number;
}

/** One committed transaction's note changes. */
export interface NoteChanges {
  /** Notes that exist after the commit and changed for whoever can see them now. */
  changed: Set<string>;
  /** Who lost sight of which note: they learn of it although they can no longer see it. */
  ended: EndedAccess[];
}

export type NoteChangesListener = (changes: NoteChanges) => void;

const recorded = new WeakMap<object, NoteChanges>();
const listeners = new WeakMap<Db, NoteChangesListener>();

function recordOf(trx: Db): NoteChanges | undefined {
  // Only a transaction has a COMMIT to wait for; every note write runs in one.
  let record = recorded.get(trx);
  if (record === undefined && trx.isTransaction) {
    record = { changed: new Set(), ended: [] };
    recorded.set(trx, record);
  }
  return record;
}

/** The note changed (created, edited, an attachment or collaborator added or removed). */
export function noteChanged(trx: Db, noteId: string): void {
  recordOf(trx)?.changed.add(noteId);
}

/** These users no longer see these notes (the tombstones of D-SYNC-3). */
export function accessEnded(trx: Db, ended: readonly EndedAccess[]): void {
  recordOf(trx)?.ended.push(...ended);
}

/** Calls `listener` with what each transaction on `db` changed, after its COMMIT. */
export function onNoteChanges(db: Db, listener: NoteChangesListener): void {
  listeners.set(db, listener);
}

/** `trx`, run on `db`, has committed: its record goes to db's listener. */
export function committed(db: Db, trx: Transaction<Database>): void {
  const record = recorded.get(trx);
  if (record === undefined) return;
  recorded.delete(trx);
  if (record.changed.size > 0 || record.ended.length > 0) listeners.get(db)?.(record);
}

/** Runs `work` in a transaction of its own, then hands on what it changed (committed). */
export async function transaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  let used: Transaction<Database> | undefined;
  const value = await db.transaction().execute((trx) => {
    used = trx;
    return work(trx);
  });
  if (used) committed(db, used);
  return value;
}
