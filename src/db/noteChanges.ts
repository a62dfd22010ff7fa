/**
 * What each write transaction changed, handed on once it has committed (issue 28, decision
 * 0033): the live streams (features/live) hint at it. The writes record into their transaction
 * (noteChanged, accessEnded: a few calls in the note writes, tombstones and collaborators), and
 * where a transaction ends (`transaction` in transaction.ts: a transaction of its own, or a group
 * of them in groupCommit.ts) hands the record to the database's listener after COMMIT. A
 * transaction that rolls back hands on nothing: its record is dropped with it. With no listener
 * (the commands), recording is a WeakMap lookup.
 */
import type { Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { Db } from './types.js';

/** A note and one of its users. */
export interface NoteOfUser {
  noteId: string;
  userId: number;
}

/** A note some user could see until this transaction (deleted, or their access ended). */
export type EndedAccess = NoteOfUser;

/** One committed transaction's note changes. */
export interface NoteChanges {
  /** Notes that exist after the commit and changed for whoever can see them now. */
  changed: Set<string>;
  /** Who lost sight of which note: they learn of it although they can no longer see it. */
  ended: EndedAccess[];
  /** Notes that changed for one of their users alone (their own reminder on it, decision 0034). */
  personal: NoteOfUser[];
}

type NoteChangesListener = (changes: NoteChanges) => void;

const recorded = new WeakMap<object, NoteChanges>();
const listeners = new WeakMap<Db, NoteChangesListener>();

function recordOf(trx: Db): NoteChanges | undefined {
  // Only a transaction has a COMMIT to wait for; every note write runs in one.
  let record = recorded.get(trx);
  if (record === undefined && trx.isTransaction) {
    record = { changed: new Set(), ended: [], personal: [] };
    recorded.set(trx, record);
  }
  return record;
}

/** The note changed (created, edited, an attachment or collaborator added or removed). */
export function noteChanged(trx: Db, noteId: string): void {
  recordOf(trx)?.changed.add(noteId);
}

/** The note changed for `userId` alone: the others' view of it did not (a reminder of theirs). */
export function noteChangedFor(trx: Db, noteId: string, userId: number): void {
  recordOf(trx)?.personal.push({ noteId, userId });
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
  if (record.changed.size > 0 || record.ended.length + record.personal.length > 0)
    listeners.get(db)?.(record);
}
