import { type Kysely, sql } from 'kysely';

/**
 * Adds FTS5 prefix indexes for 2- and 3-character prefixes to notes_fts (decision 0003): a short
 * last word (`pr`, `pro`) is then one index lookup instead of a merge of every term it starts.
 * FTS5 cannot change options in place, so the table is rebuilt: create, copy (rowids are
 * notes.doc_id and stay), drop, rename.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE VIRTUAL TABLE notes_fts_prefixed USING fts5 (
      title, content, tags,
      tokenize = 'unicode61 remove_diacritics 2',
      prefix = '2 3'
    )`.execute(db);
  await sql`
    INSERT INTO notes_fts_prefixed (rowid, title, content, tags)
    SELECT rowid, title, content, tags FROM notes_fts`.execute(db);
  await sql`DROP TABLE notes_fts`.execute(db);
  await sql`ALTER TABLE notes_fts_prefixed RENAME TO notes_fts`.execute(db);
}
