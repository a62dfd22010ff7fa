import { type Kysely, sql } from 'kysely';
import { engine } from '../dialect.js';

/**
 * notes_fts merges a segment for its tombstones only once half its documents are replaced or
 * deleted (FTS5's `deletemerge`, 10 by default; docs/decisions/0051-search-index-delete-merge.md).
 * At 10%, edits spread over many notes made FTS5 rewrite a large segment every few hundred
 * edits, the largest part of an edit's index work. FTS5 keeps the setting in notes_fts_config.
 * PostgreSQL's notes_search is a table with a GIN index: nothing to set.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (engine() !== 'sqlite') return;
  await sql`INSERT INTO notes_fts (notes_fts, rank) VALUES ('deletemerge', 50)`.execute(db);
}
