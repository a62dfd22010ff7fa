/**
 * SQLite-only fast paths for the hottest reads (docs/decisions/0017-performance.md). Kysely
 * builds and compiles a query on every call, which cost a by-id read more than SQLite itself
 * did; a store may keep such a read as one statement prepared once per connection and run it
 * on better-sqlite3 directly, beside the Kysely version of the same query. The store tries the
 * fast path first and uses the Kysely version when it answers `undefined`: for another engine
 * (only SQLite connections are registered here), for a transaction (its own Kysely object),
 * and while a transaction is open on the connection, whose uncommitted writes a read outside
 * it must not see (Kysely then waits for the transaction to end). A test pins each fast path's
 * answers to its Kysely version's.
 */
import type SQLite from 'better-sqlite3';
import type { DatabaseOptions, Db } from './connection.js';

interface Connection {
  sqlite: SQLite.Database;
  onQuery: DatabaseOptions['onQuery'];
}

const connections = new WeakMap<Db, Connection>();

/** Lets the stores' fast paths run on `sqlite` when they are handed `db` (connection.ts). */
export function enableFastPaths(db: Db, sqlite: SQLite.Database, onQuery: DatabaseOptions['onQuery']): void {
  connections.set(db, { sqlite, onQuery });
}

/** A fast path's answer: the row (undefined for none), or undefined when `db` has no fast path. */
export type FastRead<Row> = { row: Row | undefined } | undefined;

/** One read statement for a fast path, prepared the first time it runs on a connection. */
export function fastStatement<Params extends unknown[], Row>(text: string) {
  const prepared = new WeakMap<SQLite.Database, SQLite.Statement<Params, Row>>();
  /** `read` on the connection's statement, timed; undefined when `db` has no fast path now. */
  function run<Answer>(
    db: Db,
    read: (statement: SQLite.Statement<Params, Row>) => Answer,
  ): Answer | undefined {
    const connection = connections.get(db);
    if (!connection || connection.sqlite.inTransaction) return undefined;
    let statement = prepared.get(connection.sqlite);
    if (!statement) {
      statement = connection.sqlite.prepare<Params, Row>(text);
      prepared.set(connection.sqlite, statement);
    }
    const started = connection.onQuery ? performance.now() : 0;
    const answer = read(statement);
    // Timed and reported like Kysely's queries: metrics and the tests' query log see it too.
    connection.onQuery?.(text, performance.now() - started);
    return answer;
  }
  return {
    get(db: Db, ...params: Params): FastRead<Row> {
      return run(db, (statement) => ({ row: statement.get(...params) }));
    },
    /** Every row, or undefined when `db` has no fast path. */
    all(db: Db, ...params: Params): Row[] | undefined {
      return run(db, (statement) => statement.all(...params));
    },
  };
}
