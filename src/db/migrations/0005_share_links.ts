import { type Kysely, sql } from 'kysely';

/**
 * Public read-only share links (D-SHARE-1..3): at most one per note, gone with the note.
 * The token itself is stored, not a hash of it: creating a link again must return the same
 * token (the idempotent POST of docs/interface.md#states-of-a-note), so the server has to be able to read it back.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE share_links (
      note_id TEXT PRIMARY KEY REFERENCES notes (id) ON DELETE CASCADE,
      token TEXT NOT NULL UNIQUE,
      created_at INTEGER NOT NULL
    ) WITHOUT ROWID`.execute(db);
}
