import { type Kysely, sql } from 'kysely';

/**
 * The revisions of a note by age, so that pruning (model/revisions.ts) is a range over the rows
 * older than the retention window instead of a scan of every revision of the note: with nothing
 * old enough to go, the delete visits no row. The same statement on both engines.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX note_revisions_by_age ON note_revisions (note_id, created_at)`.execute(db);
}
