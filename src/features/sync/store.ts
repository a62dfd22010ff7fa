import { sql } from 'kysely';
import { engine, inJsonList } from '../../db/dialect.js';
import { WRITE_LOCK_KEY } from '../../db/postgresShared.js';
import type { Db } from '../../db/types.js';
import { type ListedNoteVersion, textBytes } from '../../model/notes.js';
import { ownedBy, sharedWith, visibleTo } from '../../model/visibility.js';

/**
 * The notes the user may see that changed at or after `since` (D-SYNC-1), oldest change first:
 * their own by updatedAt, and those shared with them by updatedAt or by the time they were
 * shared, so a note shared today reaches the new collaborator even if it last changed last
 * year. The two halves of the visibility rule (model/visibility.ts) as a UNION ALL, so the
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

/** The notes among `noteIds` that the user may see, as a pull lists them. */
export async function visibleNotesAmong(
  db: Db,
  userId: number,
  noteIds: readonly string[],
): Promise<ListedNoteVersion[]> {
  if (noteIds.length === 0) return [];
  return db
    .selectFrom('notes as n')
    .select(['n.id', 'n.doc_id', 'n.version', textBytes('n').as('bytes')])
    .where('n.id', 'in', inJsonList(noteIds))
    .where(visibleTo(userId))
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
