import { type Kysely, sql } from 'kysely';

/**
 * Rebuilds SQLite's notes_fts with FTS5 `options` after its three columns (title, content,
 * tags): FTS5 cannot change a table's options in place, so a new table is created, every
 * document copied into it (rowids, notes.doc_id, stay), the old one dropped and the new one
 * renamed. The copy reads the old table's text, which only a table with content has: every
 * rebuild so far starts from one. Migrations 0007 and 0017 use it; what it does must not change.
 */
export async function rebuildSearchIndex(db: Kysely<unknown>, options: string): Promise<void> {
  await sql`
    CREATE VIRTUAL TABLE notes_fts_rebuilt USING fts5 (title, content, tags, ${sql.raw(options)})`.execute(
    db,
  );
  await sql`
    INSERT INTO notes_fts_rebuilt (rowid, title, content, tags)
    SELECT rowid, title, content, tags FROM notes_fts`.execute(db);
  await sql`DROP TABLE notes_fts`.execute(db);
  await sql`ALTER TABLE notes_fts_rebuilt RENAME TO notes_fts`.execute(db);
}
