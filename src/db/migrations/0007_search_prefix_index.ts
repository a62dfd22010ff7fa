import type { Kysely } from 'kysely';
import { rebuildSearchIndex } from './searchIndexRebuild.js';

/**
 * Adds FTS5 prefix indexes for 2- and 3-character prefixes to notes_fts (decision 0003): a short
 * last word (`pr`, `pro`) is then one index lookup instead of a merge of every term it starts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await rebuildSearchIndex(db, "tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'");
}
