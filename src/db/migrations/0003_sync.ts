import { type Kysely, sql } from 'kysely';

/**
 * Per-field versions for conflict detection (D-SYNC-8): notes.field_versions is a JSON object
 * NoteInput field -> the note version at which that field's value last changed. A push that
 * says which version it last saw (baseVersion) can then tell whether someone else changed the
 * same field since. Notes stored before this migration have '{}': every field counts as version 1.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE notes ADD COLUMN field_versions TEXT NOT NULL DEFAULT '{}'`.execute(db);
}
