import { type Kysely, sql } from 'kysely';

/**
 * Drops 0015's index of revisions by age: pruning (model/revisions.ts) finds the revisions old
 * enough to go by walking the primary key (note_id, version) up from the oldest, which stops at
 * the first young one. The index cost every revision an entry on a page of its own: for edits
 * spread over many notes, one more 4 KiB WAL frame each (docs/benchmarks.md, "Issue 31:
 * revisions without an index by age"). The same statement on both engines.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX note_revisions_by_age`.execute(db);
}
