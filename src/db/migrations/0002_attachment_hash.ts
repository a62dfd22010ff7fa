import { type Kysely, sql } from 'kysely';

/**
 * SHA-256 of each attachment's bytes, the strong ETag of its download (D-ATT-4). No attachment
 * could be stored before this migration, so the empty default never reaches a client.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE attachments ADD COLUMN sha256 TEXT NOT NULL DEFAULT ''`.execute(db);
}
