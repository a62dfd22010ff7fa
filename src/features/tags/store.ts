import type { Db } from '../../db/connection.js';
import { visibleNoteIds } from '../notes/store.js';

/** Names of the tags carried by at least one visible, not trashed note of the user, sorted (D-TAG-2). */
export async function visibleTagNames(db: Db, userId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('tags as t')
    .select('t.name')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('note_tags as nt')
          .innerJoin('notes as n', 'n.id', 'nt.note_id')
          .select('nt.note_id')
          .whereRef('nt.tag_id', '=', 't.id')
          .where('n.trashed', '=', 0)
          .where('n.id', 'in', visibleNoteIds(userId)),
      ),
    )
    .orderBy('t.name')
    .execute();
  return rows.map((row) => row.name);
}
