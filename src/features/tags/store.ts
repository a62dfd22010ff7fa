import type { Db } from '../../db/connection.js';
import { visibleNoteIds } from '../notes/store.js';

/** Tags carried by at least one visible, not trashed note of the user, by name (D-TAG-2). */
export async function visibleTags(db: Db, userId: number): Promise<{ id: number; name: string }[]> {
  return db
    .selectFrom('tags as t')
    .select(['t.id', 't.name'])
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
}
