import type { Db } from '../../db/connection.js';

/** Ids of the notes a user owns (not those shared with them), oldest first: what an export holds. */
export async function ownedNoteIds(db: Db, userId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('notes')
    .select('id')
    .where('owner_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}

/** The owner of a note id, if the note exists (an import decides by it whether a note is there). */
export async function ownerOfNote(db: Db, noteId: string): Promise<number | undefined> {
  const row = await db.selectFrom('notes').select('owner_id').where('id', '=', noteId).executeTakeFirst();
  return row?.owner_id;
}
