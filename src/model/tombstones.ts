import { inJsonList } from '../db/dialect.js';
import { accessEnded } from '../db/noteChanges.js';
import type { Db } from '../db/types.js';

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
