import { type Kysely, sql } from 'kysely';
import { engine } from '../dialect.js';

/**
 * Attachment bytes inside PostgreSQL (docs/decisions/0021-attachment-storage.md): one row per
 * object, and its bytes in chunks of at most 256 KiB that go with it (ON DELETE CASCADE). The
 * chunks are stored EXTERNAL: out of line but uncompressed, since images are compressed already.
 * SQLite keeps attachments as files next to its database, so this migration is empty there.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (engine() !== 'postgres') return;
  await sql`
    CREATE TABLE attachment_objects (
      key TEXT PRIMARY KEY,
      size BIGINT NOT NULL,
      complete BOOLEAN NOT NULL DEFAULT false,
      stored_at BIGINT NOT NULL
    )`.execute(db);
  await sql`
    CREATE TABLE attachment_chunks (
      key TEXT NOT NULL REFERENCES attachment_objects (key) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      data BYTEA NOT NULL,
      PRIMARY KEY (key, seq)
    )`.execute(db);
  await sql`ALTER TABLE attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL`.execute(db);
}
