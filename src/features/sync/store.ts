import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import { engine, inJsonList } from '../../db/dialect.js';
import { accessEnded } from '../../db/noteChanges.js';
import { WRITE_LOCK_KEY } from '../../db/postgres.js';
import { type ListedNoteVersion, textBytes } from '../notes/store.js';
import { ownedBy, sharedWith } from '../notes/visibility.js';

/**
 * The notes the user may see that changed at or after `since` (D-SYNC-1), oldest change first:
 * their own by updatedAt, and those shared with them by updatedAt or by the time they were
 * shared, so a note shared today reaches the new collaborator even if it last changed last
 * year. The two halves of the visibility rule (notes/visibility.ts) as a UNION ALL, so the
 * own half reads only the changed range of the (owner_id, updated_at) index. Only ids, versions
 * and sizes: the notes are read in batches, or come from the cache of note answers.
 */
export async function notesChangedSince(db: Db, userId: number, since: number): Promise<ListedNoteVersion[]> {
  const rows = await db
    .selectFrom('notes as n')
    .select(['n.id', 'n.doc_id', 'n.version', 'n.updated_at', textBytes('n').as('bytes')])
    .where(ownedBy(userId))
    .where('n.updated_at', '>=', since)
    .unionAll(
      db
        .selectFrom('notes as n')
        .select(['n.id', 'n.doc_id', 'n.version', 'n.updated_at', textBytes('n').as('bytes')])
        .where(sharedWith(userId))
        .where((eb) =>
          eb.or([
            eb('n.updated_at', '>=', since),
            eb.exists(
              eb
                .selectFrom('note_collaborators as c')
                .select('c.note_id')
                .whereRef('c.note_id', '=', 'n.id')
                .where('c.user_id', '=', userId)
                .where('c.added_at', '>=', since),
            ),
          ]),
        ),
    )
    .orderBy('updated_at')
    .orderBy('id')
    .execute();
  return rows.map(({ id, doc_id, version, bytes }) => ({ id, doc_id, version, bytes }));
}

/**
 * The user's tombstones at or after `since` (D-SYNC-3). Sharing a note again forgets the user's
 * tombstone (collaborators service), so a pull never both adds and removes a note.
 */
export async function tombstonesSince(
  db: Db,
  userId: number,
  since: number,
): Promise<{ note_id: string; deleted_at: number }[]> {
  return db
    .selectFrom('note_tombstones')
    .select(['note_id', 'deleted_at'])
    .where('user_id', '=', userId)
    .where('deleted_at', '>=', since)
    .orderBy('deleted_at')
    .orderBy('note_id')
    .execute();
}

/**
 * The ids among `noteIds` that someone holds a tombstone for: they were deleted, so they stay
 * deleted (D-SYNC-6).
 */
export async function deletedAmong(db: Db, noteIds: readonly string[]): Promise<Set<string>> {
  if (noteIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('note_tombstones')
    .select('note_id')
    .distinct()
    .where('note_id', 'in', inJsonList(noteIds))
    .execute();
  return new Set(rows.map((r) => r.note_id));
}

/** The (note, user) pairs among `pairs` that hold a tombstone: those users lost sight of those notes. */
export async function tombstonedAmong(
  db: Db,
  pairs: readonly { noteId: string; userId: number }[],
): Promise<{ noteId: string; userId: number }[]> {
  if (pairs.length === 0) return [];
  const rows = await db
    .selectFrom('note_tombstones')
    .select(['note_id', 'user_id'])
    .where('note_id', 'in', inJsonList([...new Set(pairs.map((p) => p.noteId))]))
    .execute();
  const held = new Set(rows.map((r) => `${r.user_id} ${r.note_id}`));
  return pairs.filter((p) => held.has(`${p.userId} ${p.noteId}`));
}

export async function deleteTombstonesBefore(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('note_tombstones').where('deleted_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

const TOMBSTONE_CHUNK = 1_000;

export async function recordTombstones(
  db: Db,
  tombstones: readonly { noteId: string; userId: number }[],
  deletedAt: number,
): Promise<void> {
  accessEnded(db, tombstones);
  // In chunks: deleting a user with many notes must stay under the bound-parameter limit.
  for (let start = 0; start < tombstones.length; start += TOMBSTONE_CHUNK) {
    await db
      .insertInto('note_tombstones')
      .values(
        tombstones
          .slice(start, start + TOMBSTONE_CHUNK)
          .map((t) => ({ note_id: t.noteId, user_id: t.userId, deleted_at: deletedAt })),
      )
      .onConflict((oc) => oc.columns(['note_id', 'user_id']).doUpdateSet({ deleted_at: deletedAt }))
      .execute();
  }
}

/** A user regained access to a note (re-shared): its old tombstone no longer applies (D-SYNC-3). */
export async function forgetTombstone(db: Db, noteId: string, userId: number): Promise<void> {
  await db
    .deleteFrom('note_tombstones')
    .where('note_id', '=', noteId)
    .where('user_id', '=', userId)
    .execute();
}

/**
 * The time a pull answers as X-Sync-Time, read once every write that may stamp an earlier time
 * has committed (D-SYNC-1; docs/decisions/0016-sync-cursor-across-processes.md). SQLite runs
 * one statement or transaction at a time on the connection, so the clock read is enough.
 * PostgreSQL: the read waits for the write in flight (the write lock, shared), and the time is
 * stored as the floor that every later write of any process reads under that lock before it
 * stamps anything.
 */
export async function settledSyncTime(db: Db, now: () => number): Promise<number> {
  if (engine() === 'sqlite') return now();
  return db.connection().execute(async (connection) => {
    await sql`BEGIN`.execute(connection);
    try {
      await sql`SELECT pg_advisory_xact_lock_shared(${WRITE_LOCK_KEY})`.execute(connection);
      const time = now();
      await sql`UPDATE sync_clock SET floor_ms = greatest(floor_ms, ${time})`.execute(connection);
      await sql`COMMIT`.execute(connection);
      return time;
    } catch (error) {
      await sql`ROLLBACK`.execute(connection);
      throw error;
    }
  });
}
