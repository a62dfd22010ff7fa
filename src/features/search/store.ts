import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import type { NoteRow } from '../notes/store.js';
import { visibleTo } from '../notes/store.js';

/**
 * Notes visible to the user matching an FTS5 expression built by buildMatchQuery (never raw
 * user input), not trashed, best match first then newest (D-SEARCH-2).
 */
export async function searchNotes(db: Db, userId: number, match: string, limit: number): Promise<NoteRow[]> {
  const result = await sql<NoteRow>`
    SELECT n.* FROM notes_fts
    JOIN notes n ON n.doc_id = notes_fts.rowid
    WHERE notes_fts MATCH ${match}
      AND n.trashed = 0
      AND ${visibleTo(userId)}
    ORDER BY bm25(notes_fts, 10.0, 1.0, 5.0), n.updated_at DESC
    LIMIT ${limit}`.execute(db);
  return result.rows;
}
