import type { Kysely } from 'kysely';
import { engine } from '../dialect.js';
import { rebuildSearchIndex } from './searchIndexRebuild.js';

/**
 * notes_fts without its own copy of the text (docs/decisions/0049-contentless-search-index.md):
 * `content=''` stores only the index, `contentless_delete=1` (SQLite 3.43) lets a note's
 * document be replaced and deleted by rowid. A stored FTS5 table kept every title, content and
 * tag string a second time, wrote that row again on every indexed write, and tokenized the old
 * text again to delete it; contentless, a replaced document is a tombstone. Nothing reads the
 * text back from the index: searches read notes by rowid (notes.doc_id). PostgreSQL's
 * notes_search holds only its tsvector already.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (engine() !== 'sqlite') return;
  await rebuildSearchIndex(
    db,
    "content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'",
  );
}
