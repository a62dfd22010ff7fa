/**
 * Reads kept while the SQLite database is unchanged (docs/decisions/0027-kept-lists.md). A
 * client polling its list of 1,000 notes made the server read and sort the same 1,000 rows on
 * every request; kept, the read costs one statement that tells whether anything changed.
 */
import { LRUCache } from 'lru-cache';
import { fastStatement } from './fastPath.js';
import type { Db } from './types.js';

/**
 * What names the database's state as this connection sees it: the rows this connection has
 * inserted, updated or deleted since it opened (total_changes(), triggers' changes included,
 * counted as each statement runs, so an uncommitted or rolled-back change moves it too), and
 * data_version, which moves when another connection (another process: a command run beside
 * the server) commits. Equal generations mean no row changed in between.
 */
const generationStatement = fastStatement<[], { generation: string }>(
  "SELECT total_changes() || ':' || data_version AS generation FROM pragma_data_version",
);

/**
 * A keeper of `read`'s answers by key, each with the generation read before it; an answer is
 * served while the generation is the same. Where there is no fast path (PostgreSQL, or while a
 * transaction is open on the connection), every call reads. The answers are shared between
 * callers: they must not be changed. At most `maxSize` by `sizeOf`, least recently used first out.
 */
export function keptWhileUnchanged<Answer extends object>(options: {
  maxSize: number;
  /** An answer's share of maxSize; its key's too where keys can be long (a search's words). */
  sizeOf: (answer: Answer, key: string) => number;
  /**
   * Keep an answer only when its key was read before under the same generation, for reads
   * whose keys rarely repeat (a search's words): keeping every answer then costs more, in
   * garbage collection of answers nobody asks for again, than the repeats save.
   */
  fromSecondRead?: boolean;
}) {
  const kept = new WeakMap<Db, LRUCache<string, { generation: string; answer: Answer }>>();
  // The keys read once, with their generation: strings only, the last SEEN_KEYS of them.
  const seen = new WeakMap<Db, LRUCache<string, string>>();
  return async (db: Db, key: string, read: () => Promise<Answer>): Promise<Answer> => {
    const generation = generationStatement.get(db)?.row?.generation;
    if (generation === undefined) return read();
    let answers = kept.get(db);
    if (!answers) {
      answers = new LRUCache({
        maxSize: options.maxSize,
        sizeCalculation: (entry, key) => options.sizeOf(entry.answer, key),
      });
      kept.set(db, answers);
    }
    const entry = answers.get(key);
    if (entry?.generation === generation) return entry.answer;
    if (options.fromSecondRead) {
      let seenKeys = seen.get(db);
      if (!seenKeys) {
        seenKeys = new LRUCache({ max: SEEN_KEYS });
        seen.set(db, seenKeys);
      }
      if (seenKeys.get(key) !== generation) {
        seenKeys.set(key, generation);
        return read();
      }
    }
    // Kept under the generation read before the read: a change landing in between only makes
    // the next call read again, never serves an older answer.
    const answer = await read();
    answers.set(key, { generation, answer });
    return answer;
  };
}

/** How many keys read once are remembered (fromSecondRead): at most ~1 MB of a search's words. */
const SEEN_KEYS = 1_000;
