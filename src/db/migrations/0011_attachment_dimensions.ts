import { type Kysely, sql } from 'kysely';

/**
 * An image's width and height as it is shown (EXIF orientation applied; an animation's first
 * frame), so that a client can size its box before the image loads. Attachments uploaded before
 * this migration keep NULL: measuring them would mean reading every stored file at start-up.
 * The same statements on both engines.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE attachments ADD COLUMN width INTEGER`.execute(db);
  await sql`ALTER TABLE attachments ADD COLUMN height INTEGER`.execute(db);
}
