import type { Db } from '../../db/types.js';
import { type ListedNote, textBytes } from '../../model/notes.js';

/**
 * The notes a user owns (not those shared with them), oldest first, with their text size so
 * they are read in bounded batches (noteViewBatches): what an export holds.
 */
export async function ownedNotes(db: Db, userId: number): Promise<ListedNote[]> {
  return db
    .selectFrom('notes as n')
    .select(['n.id', textBytes('n').as('bytes')])
    .where('n.owner_id', '=', userId)
    .orderBy('n.created_at')
    .orderBy('n.id')
    .execute();
}

/** The owner of a note id, if the note exists (an import decides by it whether a note is there). */
export async function ownerOfNote(db: Db, noteId: string): Promise<number | undefined> {
  const row = await db.selectFrom('notes').select('owner_id').where('id', '=', noteId).executeTakeFirst();
  return row?.owner_id;
}
