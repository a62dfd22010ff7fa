/**
 * Reads kept while the SQLite database is unchanged (docs/decisions/0027-kept-lists.md). A
 * client polling its list of 1,000 notes made the server read and sort the same 1,000 rows on
 * every request; kept, the read costs one statement that tells whether anything changed.
 */
import type SQLite from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import { fastSqlite, fastStatement } from './fastPath.js';
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

/** How often, at most, a keeper of rows asks whether another connection committed. */
export const OTHER_CONNECTIONS_MS = 100;

interface TableWatch<Row> {
  /** Moves whenever a row of the watched tables changes on this connection. */
  generation: number;
  rows: LRUCache<string, { generation: number; commits: number; row: Row | undefined }>;
}

/** Another connection's commits as this connection has seen them, asked once for all keepers. */
interface OtherCommits {
  dataVersion: SQLite.Statement<[], number>;
  lastDataVersion: number;
  checkedAt: number;
  /** Moves whenever data_version was seen to move. */
  count: number;
}

const otherCommitsByConnection = new WeakMap<SQLite.Database, OtherCommits>();

/** How many times another connection was seen to commit, asked at most every OTHER_CONNECTIONS_MS. */
function otherCommits(sqlite: SQLite.Database): number {
  let others = otherCommitsByConnection.get(sqlite);
  const now = performance.now();
  if (!others) {
    const dataVersion = sqlite.prepare<[], number>('SELECT data_version FROM pragma_data_version').pluck();
    others = { dataVersion, lastDataVersion: dataVersion.get() as number, checkedAt: now, count: 0 };
    otherCommitsByConnection.set(sqlite, others);
  } else if (now - others.checkedAt >= OTHER_CONNECTIONS_MS) {
    others.checkedAt = now;
    const version = others.dataVersion.get() as number;
    if (version !== others.lastDataVersion) {
      others.lastDataVersion = version;
      others.count++;
    }
  }
  return others.count;
}

/** A keeper's call: synchronous when `read` is (a fast path's statement). */
interface RowKeeper<Row> {
  (db: Db, key: string, read: () => Row | undefined): Row | undefined;
  (
    db: Db,
    key: string,
    read: () => Row | undefined | Promise<Row | undefined>,
  ): Row | undefined | Promise<Row | undefined>;
}

/**
 * A keeper of single rows by key while the tables they are read from are unchanged: for a read
 * asked on nearly every request from tables that rarely change (the session's user, the API
 * key's, a note's reminder and attachments; docs/decisions/0048-kept-credentials.md). Unlike
 * keptWhileUnchanged, a note's write does not end what is kept.
 *
 * A change made on this connection is seen at once: a TEMP trigger on each table (this
 * connection's own, no part of the schema) calls back into JavaScript as each row changes,
 * cascades included, committed or not (a change rolled back only costs one more read). A change
 * another connection commits (a command run beside the server: reset-password) is seen through
 * data_version, asked at most every OTHER_CONNECTIONS_MS: a kept row outlives such a change by
 * at most that long. Where there is no fast path (PostgreSQL, or beside an open transaction)
 * every call reads; a group commit's transaction may use what was kept before it, but what it
 * reads is not kept. The rows are shared and must not be changed.
 */
export function keptWhileTablesUnchanged<Row extends object>(options: {
  /** Names this keeper's trigger function and triggers on the connection. */
  name: string;
  tables: readonly string[];
  max: number;
  /** Keep "no row" too (never for credentials: unknown tokens are an attacker's to choose). */
  keepMissing?: boolean;
}): RowKeeper<Row> {
  const watches = new WeakMap<SQLite.Database, TableWatch<Row>>();
  /** The connection's watch, set up on first use; none yet inside a transaction. */
  const watch = (sqlite: SQLite.Database): TableWatch<Row> | undefined => {
    let found = watches.get(sqlite);
    // Triggers created inside a transaction go with its rollback (a group commit write's too),
    // and what was kept would then never hear a change: they are created outside one.
    if (found || sqlite.inTransaction) return found;
    const created: TableWatch<Row> = { generation: 0, rows: new LRUCache({ max: options.max }) };
    const changed = `kept_rows_changed_${options.name}`;
    sqlite.function(changed, { deterministic: false }, () => {
      created.generation++;
      return null;
    });
    for (const table of options.tables) {
      for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
        sqlite.exec(
          `CREATE TEMP TRIGGER IF NOT EXISTS kept_rows_${options.name}_${table}_${event.toLowerCase()}
           AFTER ${event} ON main.${table} BEGIN SELECT ${changed}(); END`,
        );
      }
    }
    found = created;
    watches.set(sqlite, found);
    return found;
  };
  return ((db: Db, key: string, read: () => Row | undefined | Promise<Row | undefined>) => {
    const sqlite = fastSqlite(db);
    const tables = sqlite && watch(sqlite);
    if (!sqlite || !tables) return read();
    const commits = otherCommits(sqlite);
    // Kept under the generations read before the read: a change landing in between only makes
    // the next call read again.
    const generation = tables.generation;
    const kept = tables.rows.get(key);
    if (kept?.generation === generation && kept.commits === commits) return kept.row;
    const keep = (row: Row | undefined) => {
      // Never what a transaction sees: a rollback, to its start or to a write's savepoint in
      // group commit, undoes its changes without a trigger to say so.
      if ((row || options.keepMissing) && !sqlite.inTransaction) {
        tables.rows.set(key, { generation, commits, row });
      }
      return row;
    };
    const row = read();
    return row instanceof Promise ? row.then(keep) : keep(row);
  }) as RowKeeper<Row>;
}
