import { type Kysely, sql } from 'kysely';

/**
 * Revisions of each note's title and content (D-SYNC-9): one row per note version that changed
 * either, so a sync push can merge against the text its device last saw, and people can list
 * and restore older texts. Rows go with their note (ON DELETE CASCADE covers every delete path:
 * REST, sync, trash purge, user removal). author_id has no foreign key: a revision outlives
 * the removal of a collaborator who wrote it (user ids are never reused, AUTOINCREMENT).
 * Existing notes get their current text as their first revision.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE note_revisions (
      note_id TEXT NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
      version INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      author_id INTEGER NOT NULL,
      title TEXT NOT NULL,
      content TEXT NOT NULL,
      PRIMARY KEY (note_id, version)
    ) WITHOUT ROWID`.execute(db);
  await sql`
    INSERT INTO note_revisions (note_id, version, created_at, author_id, title, content)
    SELECT id, version, updated_at, owner_id, title, content FROM notes`.execute(db);
}
