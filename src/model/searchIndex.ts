import { CompiledQuery, sql } from 'kysely';
import { engine, inJsonList } from '../db/dialect.js';
import { fastStatement } from '../db/fastPath.js';
import type { Db } from '../db/types.js';
import { type ListedNoteVersion, textBytes } from './notes.js';
import { tsvectorInput } from './searchText.js';
import { visibleTo } from './visibility.js';

/**
 * The index rowid (notes.doc_id, which grows with each note created) of the `n`-th newest note
 * of any user matching an FTS5 expression built by buildMatchQuery, or null when fewer than `n`
 * notes match. FTS5 walks `ORDER BY rowid DESC` without ranking anything (0003).
 */
export async function nthNewestMatch(db: Db, match: string, n: number): Promise<number | null> {
  if (engine() === 'postgres') {
    const found = await sql<{ doc_id: number }>`
      SELECT doc_id FROM notes_search
      WHERE document @@ CAST(${match} AS tsquery)
      ORDER BY doc_id DESC
      LIMIT 1 OFFSET ${n - 1}`.execute(db);
    return found.rows[0]?.doc_id ?? null;
  }
  const result = await sql<{ rowid: number }>`
    SELECT rowid FROM notes_fts
    WHERE notes_fts MATCH ${match}
    ORDER BY rowid DESC
    LIMIT 1 OFFSET ${n - 1}`.execute(db);
  return result.rows[0]?.rowid ?? null;
}

/**
 * The index terms that start with `prefix` (lower-case ASCII, lastWordPrefix), or null when
 * there are more than `max` of them: in byte order, from the per-connection fts5vocab table
 * over notes_fts (connection.ts). SQLite only.
 */
export async function indexTermsStartingWith(db: Db, prefix: string, max: number): Promise<string[] | null> {
  // The first string after every term that starts with the prefix: its last character raised.
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  const found = await sql<{ term: string }>`
    SELECT term FROM temp.notes_fts_vocab
    WHERE term >= ${prefix} AND term < ${end}
    LIMIT ${max + 1}`.execute(db);
  return found.rows.length > max ? null : found.rows.map((row) => row.term);
}

/**
 * The index rows a search ranks (0003): the `size` newest matches, which are those from
 * `oldestDocId` on. Each engine uses the form its index answers fastest.
 */
export interface RankingWindow {
  size: number;
  oldestDocId: number;
}

/**
 * Notes visible to the user matching an FTS5 expression built by buildMatchQuery (never raw
 * user input), not trashed, best match first then newest (D-SEARCH-2). With a window, only its
 * index rows are ranked, so bm25 runs on a bounded number of rows (0003). Only ids, versions
 * and sizes: the notes are read in batches like a list's, or come from the cache of note
 * answers (noteJsonBatches).
 */
export async function searchNotes(
  db: Db,
  userId: number,
  match: string,
  limit: number,
  window: RankingWindow | null,
): Promise<ListedNoteVersion[]> {
  if (engine() === 'postgres') {
    // ts_rank's weights are {D, C, B, A}: tags (C) 0.5, content (B) 0.1, title (A) 1, the
    // proportions of bm25's 5, 1 and 10 below.
    const found = await sql<ListedNoteVersion>`
      SELECT n.id, n.doc_id, n.version, ${textBytes('n')} AS bytes FROM notes_search s
      JOIN notes n ON n.doc_id = s.doc_id
      WHERE s.document @@ CAST(${match} AS tsquery)
        ${window === null ? sql`` : sql`AND s.doc_id >= ${window.oldestDocId}`}
        AND n.trashed = 0
        AND ${visibleTo(userId)}
      ORDER BY ts_rank('{0, 0.5, 0.1, 1}', s.document, CAST(${match} AS tsquery)) DESC, n.updated_at DESC
      LIMIT ${limit}`.execute(db);
    return found.rows;
  }
  // The window as FTS5's newest `size` rows (LIMIT -1: all), scored there, then joined: FTS5
  // walks a doclist backwards cheaply but answers `rowid >= x` slowly (100,000 notes, a common
  // word: 10 ms ranked that way, 3.5 ms this way). CROSS JOIN keeps the window first; given
  // the choice, SQLite starts from the user's notes and probes the window (90 ms).
  const result = await sql<ListedNoteVersion>`
    SELECT n.id, n.doc_id, n.version, ${textBytes('n')} AS bytes
    FROM (
      SELECT rowid AS doc_id, bm25(notes_fts, 10.0, 1.0, 5.0) AS score FROM notes_fts
      WHERE notes_fts MATCH ${match}
      ORDER BY rowid DESC LIMIT ${window?.size ?? -1}
    ) w
    CROSS JOIN notes n ON n.doc_id = w.doc_id
    WHERE n.trashed = 0 AND ${visibleTo(userId)}
    ORDER BY w.score, n.updated_at DESC
    LIMIT ${limit}`.execute(db);
  return result.rows;
}

// FTS5 answers OR REPLACE by deleting the old document of that rowid: one statement, not two.
const SQLITE_WRITE_DOCUMENT =
  'INSERT OR REPLACE INTO notes_fts (rowid, title, content, tags) VALUES (?, ?, ?, ?)';
const writeDocumentStatement = fastStatement<[number, string, string, string], never>(SQLITE_WRITE_DOCUMENT);

/** Writes a note's search document, replacing the one it had. */
export async function writeSearchDocument(
  db: Db,
  docId: number,
  doc: { title: string; content: string; tags: string },
): Promise<void> {
  if (engine() === 'postgres') {
    await sql`
      INSERT INTO notes_search (doc_id, document) VALUES (${docId}, CAST(${tsvectorInput(doc)} AS tsvector))
      ON CONFLICT (doc_id) DO UPDATE SET document = excluded.document`.execute(db);
    return;
  }
  const params = [docId, doc.title, doc.content, doc.tags] as const;
  if (writeDocumentStatement.run(db, ...params)) return;
  await db.executeQuery(CompiledQuery.raw(SQLITE_WRITE_DOCUMENT, [...params]));
}

/** Removes the search documents of notes being deleted (notes.doc_id). */
export async function deleteSearchDocuments(db: Db, docIds: readonly number[]): Promise<void> {
  if (engine() === 'postgres') {
    if (docIds.length > 0)
      await db.deleteFrom('notes_search').where('doc_id', 'in', inJsonList(docIds)).execute();
    return;
  }
  await sql`DELETE FROM notes_fts WHERE rowid IN ${inJsonList(docIds)}`.execute(db);
}
