import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import { inJsonList } from '../../db/dialect.js';
import { type ListedNote, textBytes } from '../notes/store.js';
import { visibleTo } from '../notes/visibility.js';

/**
 * The index rowid (notes.doc_id, which grows with each note created) of the `n`-th newest note
 * of any user matching an FTS5 expression built by buildMatchQuery, or null when fewer than `n`
 * notes match. FTS5 walks `ORDER BY rowid DESC` without ranking anything (0003).
 */
export async function nthNewestMatch(db: Db, match: string, n: number): Promise<number | null> {
  const result = await sql<{ rowid: number }>`
    SELECT rowid FROM notes_fts
    WHERE notes_fts MATCH ${match}
    ORDER BY rowid DESC
    LIMIT 1 OFFSET ${n - 1}`.execute(db);
  return result.rows[0]?.rowid ?? null;
}

/**
 * Notes visible to the user matching an FTS5 expression built by buildMatchQuery (never raw
 * user input), not trashed, best match first then newest (D-SEARCH-2). With `minDocId`, only
 * index rows from that rowid on are ranked, so bm25 runs on a bounded window (0003). Only ids
 * and sizes: the notes are read in batches like a list's (noteViewBatches).
 */
export async function searchNotes(
  db: Db,
  userId: number,
  match: string,
  limit: number,
  minDocId: number | null,
): Promise<ListedNote[]> {
  const window = minDocId === null ? sql`` : sql`AND notes_fts.rowid >= ${minDocId}`;
  const result = await sql<ListedNote>`
    SELECT n.id, ${textBytes('n')} AS bytes FROM notes_fts
    JOIN notes n ON n.doc_id = notes_fts.rowid
    WHERE notes_fts MATCH ${match}
      ${window}
      AND n.trashed = 0
      AND ${visibleTo(userId)}
    ORDER BY bm25(notes_fts, 10.0, 1.0, 5.0), n.updated_at DESC
    LIMIT ${limit}`.execute(db);
  return result.rows;
}

/** Writes a note's search document, replacing the one it had. */
export async function writeSearchDocument(
  db: Db,
  docId: number,
  doc: { title: string; content: string; tags: string },
): Promise<void> {
  // FTS5 answers OR REPLACE by deleting the old document of that rowid: one statement, not two.
  await sql`INSERT OR REPLACE INTO notes_fts (rowid, title, content, tags) VALUES (${docId}, ${doc.title}, ${doc.content}, ${doc.tags})`.execute(
    db,
  );
}

/** Removes the search documents of notes being deleted (notes.doc_id). */
export async function deleteSearchDocuments(db: Db, docIds: readonly number[]): Promise<void> {
  await sql`DELETE FROM notes_fts WHERE rowid IN ${inJsonList(docIds)}`.execute(db);
}
