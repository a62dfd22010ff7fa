import { type Kysely, sql } from 'kysely';
import { engine } from '../dialect.js';

/**
 * note_revisions as an ordinary table with its primary key (note_id, version) as an index
 * beside it, no longer WITHOUT ROWID (docs/decisions/0052-revisions-rowid-table.md). Each
 * revision holds a whole title and content: stored inside the primary key's B-tree, a page
 * held a few of them, and a revision of any note went into that note's page, often splitting
 * it. Now the rows are appended at the table's end and the key's small entries go into the
 * index: an edit's revision writes 3 to 4 times fewer WAL bytes. SQLite cannot drop WITHOUT ROWID
 * in place: a new table, every row copied, the old one dropped, the new one renamed.
 * PostgreSQL's tables are heaps with their key as an index already.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (engine() !== 'sqlite') return;
  // The table as 0009 created it, but for WITHOUT ROWID: the same columns, key and foreign key.
  const created = await sql<{ sql: string }>`
    SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'note_revisions'`.execute(db);
  const definition = created.rows[0]?.sql ?? '';
  const rebuilt = definition
    .replace(/^CREATE TABLE note_revisions\b/, 'CREATE TABLE note_revisions_rebuilt')
    .replace(/\)\s*WITHOUT ROWID\s*$/, ')');
  if (!/^CREATE TABLE note_revisions_rebuilt\b/.test(rebuilt) || /WITHOUT ROWID/.test(rebuilt)) {
    throw new Error(`note_revisions is not the table migration 0009 made: ${definition}`);
  }
  await sql.raw(rebuilt).execute(db);
  await sql`
    INSERT INTO note_revisions_rebuilt (note_id, version, created_at, author_id, title, content)
    SELECT note_id, version, created_at, author_id, title, content FROM note_revisions`.execute(db);
  await sql`DROP TABLE note_revisions`.execute(db);
  await sql`ALTER TABLE note_revisions_rebuilt RENAME TO note_revisions`.execute(db);
}
