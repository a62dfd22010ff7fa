import { sql } from 'kysely';
import { noteChanged } from '../db/noteChanges.js';
import type { Db } from '../db/types.js';
import { recordTombstones } from './tombstones.js';

export async function listCollaborators(db: Db, noteId: string) {
  return db
    .selectFrom('note_collaborators as c')
    .innerJoin('users as u', 'u.id', 'c.user_id')
    .select(['c.user_id', 'c.added_at', 'u.display_name', 'u.email'])
    .where('c.note_id', '=', noteId)
    .orderBy('c.added_at')
    .orderBy('c.user_id')
    .execute();
}

export async function isCollaborator(db: Db, noteId: string, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('note_collaborators')
    .select('user_id')
    .where('note_id', '=', noteId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertCollaborator(db: Db, noteId: string, userId: number, addedAt: number) {
  await db
    .insertInto('note_collaborators')
    .values({ note_id: noteId, user_id: userId, added_at: addedAt })
    .execute();
  noteChanged(db, noteId);
}

/** Shares `toNoteId` with every collaborator of `fromNoteId` (a conflict copy, D-SYNC-8). */
export async function shareLikeNote(db: Db, fromNoteId: string, toNoteId: string, addedAt: number) {
  await db
    .insertInto('note_collaborators')
    .columns(['note_id', 'user_id', 'added_at'])
    .expression((eb) =>
      eb
        .selectFrom('note_collaborators')
        .select([sql<string>`${toNoteId}`.as('note_id'), 'user_id', sql<number>`${addedAt}`.as('added_at')])
        .where('note_id', '=', fromNoteId),
    )
    .execute();
}

/** Returns whether there was such a collaborator. */
export async function deleteCollaborator(db: Db, noteId: string, userId: number): Promise<boolean> {
  const result = await db
    .deleteFrom('note_collaborators')
    .where('note_id', '=', noteId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Ends a collaborator's access to a note and leaves them a tombstone, so their devices drop the
 * note on the next sync (D-SYNC-3). Returns false when the user was not a collaborator. Sync
 * uses it for a collaborator's delete (D-SYNC-6).
 */
export async function endCollaboration(
  db: Db,
  noteId: string,
  userId: number,
  now: number,
): Promise<boolean> {
  if (!(await deleteCollaborator(db, noteId, userId))) return false;
  await recordTombstones(db, [{ noteId, userId }], now);
  // The others who see the note: its collaborators changed.
  noteChanged(db, noteId);
  return true;
}
