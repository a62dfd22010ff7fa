import { CompiledQuery, sql } from 'kysely';
import { atCommit } from '../db/beforeCommit.js';
import { engine, inJsonList } from '../db/dialect.js';
import { fastStatement } from '../db/fastPath.js';
import type { Db } from '../db/types.js';
import { eventLoopTurns, WRITE_SLICE_MS } from '../eventLoop.js';
import { type ListedNoteVersion, textBytes } from './notes.js';
import { tsvectorInput } from './searchText.js';
import { visibleTo } from './visibility.js';

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
 * The notes visible to the user matching an FTS5 expression built by buildMatchQuery (never raw
 * user input), not trashed, best match first then newest (D-SEARCH-2), ranked within the
 * user's `window` newest such matches (0003): bm25 or ts_rank runs on at most `window` rows, and
 * only on the user's own, so other users' notes never crowd the window nor cost a ranking.
 * Only ids, versions and sizes: the notes are read in batches like a list's, or come from the
 * cache of note answers (noteJsonBatches).
 */
export async function searchNotes(
  db: Db,
  userId: number,
  match: string,
  limit: number,
  window: number,
): Promise<ListedNoteVersion[]> {
  if (engine() === 'postgres') {
    // ts_rank's weights are {D, C, B, A}: tags (C) 0.5, content (B) 0.1, title (A) 1, the
    // proportions of bm25's 5, 1 and 10 below.
    const found = await sql<ListedNoteVersion>`
      SELECT id, doc_id, version, bytes FROM (
        SELECT n.id, n.doc_id, n.version, n.updated_at, ${textBytes('n')} AS bytes, s.document
        FROM notes_search s
        JOIN notes n ON n.doc_id = s.doc_id
        WHERE s.document @@ CAST(${match} AS tsquery) AND n.trashed = 0 AND ${visibleTo(userId)}
        ORDER BY s.doc_id DESC
        LIMIT ${window}
      ) w
      ORDER BY ts_rank('{0, 0.5, 0.1, 1}', w.document, CAST(${match} AS tsquery)) DESC, w.updated_at DESC
      LIMIT ${limit}`.execute(db);
    return found.rows;
  }
  // FTS5 walks the matches newest first (its doclists in rowid order, no sort) and CROSS JOIN
  // keeps it the outer loop: given the choice, SQLite starts from the user's notes and probes
  // the index (90 ms at 100,000 notes). bm25 is computed in the window's projection, so only
  // for the rows that passed the trashed and visibility tests, and the walk stops at `window`.
  const result = await sql<ListedNoteVersion>`
    SELECT id, doc_id, version, bytes FROM (
      SELECT n.id, n.doc_id, n.version, n.updated_at, ${textBytes('n')} AS bytes,
        bm25(notes_fts, 10.0, 1.0, 5.0) AS score
      FROM notes_fts
      CROSS JOIN notes n ON n.doc_id = notes_fts.rowid
      WHERE notes_fts MATCH ${match} AND n.trashed = 0 AND ${visibleTo(userId)}
      ORDER BY notes_fts.rowid DESC
      LIMIT ${window}
    )
    ORDER BY score, updated_at DESC
    LIMIT ${limit}`.execute(db);
  return result.rows;
}

// FTS5 answers OR REPLACE by deleting the old document of that rowid: one statement, not two.
const SQLITE_WRITE_DOCUMENT =
  'INSERT OR REPLACE INTO notes_fts (rowid, title, content, tags) VALUES (?, ?, ?, ?)';
const writeDocumentStatement = fastStatement<[number, string, string, string], never>(SQLITE_WRITE_DOCUMENT);

type SearchDocument = { title: string; content: string; tags: string };

/**
 * On SQLite, each transaction's search documents by doc_id (null: deleted), written at its end
 * (db/beforeCommit.ts): in one FTS5 segment for the whole group, and once for a note written
 * twice in it.
 */
const pendingDocuments = new WeakMap<Db, Map<number, SearchDocument | null>>();

/** The pending documents of `db`'s transaction, or undefined to write at once (PostgreSQL, no transaction end). */
function pendingOf(db: Db): Map<number, SearchDocument | null> | undefined {
  if (engine() !== 'sqlite') return undefined;
  const kept = pendingDocuments.get(db);
  if (kept) return kept;
  const pending = new Map<number, SearchDocument | null>();
  const writeAtCommit = () => {
    // Written once: a write after this (none is made) would find no map and go straight in.
    pendingDocuments.delete(db);
    return writeDocuments(db, pending);
  };
  if (!atCommit(db, writeAtCommit)) return undefined;
  pendingDocuments.set(db, pending);
  return pending;
}

async function writeDocuments(db: Db, documents: ReadonlyMap<number, SearchDocument | null>): Promise<void> {
  const deleted: number[] = [];
  // A push's 1,000 documents of 16 kB each take FTS5 a second: the loop turns meanwhile, as in
  // the push itself (its transaction stays open; other requests' queries wait for it).
  const giveWay = eventLoopTurns(WRITE_SLICE_MS);
  for (const [docId, doc] of documents) {
    if (doc === null) deleted.push(docId);
    else {
      await writeSqliteDocument(db, docId, doc);
      await giveWay();
    }
  }
  if (deleted.length > 0) await sql`DELETE FROM notes_fts WHERE rowid IN ${inJsonList(deleted)}`.execute(db);
}

async function writeSqliteDocument(db: Db, docId: number, doc: SearchDocument): Promise<void> {
  const params = [docId, doc.title, doc.content, doc.tags] as const;
  if (writeDocumentStatement.run(db, ...params)) return;
  await db.executeQuery(CompiledQuery.raw(SQLITE_WRITE_DOCUMENT, [...params]));
}

/** Writes a note's search document, replacing the one it had. */
export async function writeSearchDocument(db: Db, docId: number, doc: SearchDocument): Promise<void> {
  if (engine() === 'postgres') {
    await sql`
      INSERT INTO notes_search (doc_id, document) VALUES (${docId}, CAST(${tsvectorInput(doc)} AS tsvector))
      ON CONFLICT (doc_id) DO UPDATE SET document = excluded.document`.execute(db);
    return;
  }
  const pending = pendingOf(db);
  if (pending) pending.set(docId, doc);
  else await writeSqliteDocument(db, docId, doc);
}

/** Removes the search documents of notes being deleted (notes.doc_id). */
export async function deleteSearchDocuments(db: Db, docIds: readonly number[]): Promise<void> {
  if (docIds.length === 0) return;
  if (engine() === 'postgres') {
    await db.deleteFrom('notes_search').where('doc_id', 'in', inJsonList(docIds)).execute();
    return;
  }
  const pending = pendingOf(db);
  if (!pending) return writeDocuments(db, new Map(docIds.map((docId) => [docId, null])));
  for (const docId of docIds) pending.set(docId, null);
}
