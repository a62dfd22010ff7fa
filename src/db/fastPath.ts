/**
 * SQLite-only fast paths for the hottest reads and writes (docs/decisions/0017-performance.md,
 * 0037-less-per-write.md). Kysely
 * builds and compiles a query on every call, which cost a by-id read more than SQLite itself
 * did; a store may keep such a read as one statement prepared once per connection and run it
 * on better-sqlite3 directly, beside the Kysely version of the same query. The store tries the
 * fast path first and uses the Kysely version when it answers `undefined`: for another engine
 * (only SQLite connections are registered here), for a transaction not registered with
 * enableFastPathsIn (its own Kysely object), and while a transaction is open on the connection,
 * whose uncommitted writes a read outside it must not see (Kysely then waits for the
 * transaction to end). A test pins each fast path's answers to its Kysely version's.
 *
 * Writes take a fast path only inside the write transactions of db/transaction.ts, grouped or
 * not (enableFastPathsIn), where every write of a note runs: the same statements Kysely would
 * run, in the same transaction, so
 * atomicity and durability are the transaction's as before. test/fast-writes.test.ts pins the
 * rows they leave to the rows the Kysely versions leave.
 */
import type SQLite from 'better-sqlite3';
import type { Compilable } from 'kysely';
import { statementCache } from './statementCache.js';
import type { DatabaseOptions, Db } from './types.js';

interface Connection {
  sqlite: SQLite.Database;
  onQuery: DatabaseOptions['onQuery'];
}

const connections = new WeakMap<Db, Connection>();
/** Transactions whose own statements may take the fast paths (enableFastPathsIn). */
const transactions = new WeakMap<Db, Connection>();

/**
 * The connection a fast path may run on now: none for another engine or beside a transaction;
 * for a registered transaction, its connection while it is open.
 */
function fastConnection(db: Db): Connection | undefined {
  const connection = connections.get(db);
  if (connection) return connection.sqlite.inTransaction ? undefined : connection;
  const holder = transactions.get(db);
  return holder?.sqlite.inTransaction ? holder : undefined;
}

/**
 * The SQLite connection a fast path may use for `db` now (none for another engine or beside an
 * open transaction; see fastConnection): for keepers of reads (db/keptReads.ts).
 */
export function fastSqlite(db: Db): SQLite.Database | undefined {
  return fastConnection(db)?.sqlite;
}

/** Runs `read`, timed and reported like Kysely's queries (metrics, the tests' query log). */
function timed<Answer>(connection: Connection, text: string, read: () => Answer): Answer {
  const started = connection.onQuery ? performance.now() : 0;
  const answer = read();
  connection.onQuery?.(text, performance.now() - started);
  return answer;
}

/** Lets the stores' fast paths run on `sqlite` when they are handed `db` (connection.ts). */
export function enableFastPaths(db: Db, sqlite: SQLite.Database, onQuery: DatabaseOptions['onQuery']): void {
  connections.set(db, { sqlite, onQuery });
}

/**
 * Lets the fast paths run for `trx`, a write transaction on `db`'s connection (group commit's,
 * or one of its own: either holds the connection for its writes). Safe because SQLite has one
 * connection: while `trx` is
 * open, Kysely runs nothing else on it (other queries wait for the transaction, and fast paths
 * handed `db` refuse), and better-sqlite3 never yields, so a fast read for the transaction's own
 * code sees exactly what its Kysely version would: the transaction's writes, those of the
 * writes grouped before it included. After the transaction ends `trx` has no fast path.
 */
export function enableFastPathsIn(trx: Db, db: Db): void {
  const connection = connections.get(db);
  if (connection) transactions.set(trx, connection);
}

/** A fast path's answer: the row (undefined for none), or undefined when `db` has no fast path. */
type FastRead<Row> = { row: Row | undefined } | undefined;

/** One read statement for a fast path, prepared the first time it runs on a connection. */
export function fastStatement<Params extends unknown[], Row>(text: string) {
  const prepared = new WeakMap<SQLite.Database, SQLite.Statement<Params, Row>>();
  /** `read` on the connection's statement, timed; undefined when `db` has no fast path now. */
  function run<Answer>(
    db: Db,
    read: (statement: SQLite.Statement<Params, Row>) => Answer,
  ): Answer | undefined {
    const connection = fastConnection(db);
    if (!connection) return undefined;
    let statement = prepared.get(connection.sqlite);
    if (!statement) {
      statement = connection.sqlite.prepare<Params, Row>(text);
      prepared.set(connection.sqlite, statement);
    }
    return timed(connection, text, () => read(statement));
  }
  const reads = {
    get(db: Db, ...params: Params): FastRead<Row> {
      return run(db, (statement) => ({ row: statement.get(...params) }));
    },
    /**
     * The row (undefined for none) from the fast path, or from `slow`, the same query through
     * Kysely, when `db` has no fast path now.
     */
    getOr(
      db: Db,
      params: Params,
      slow: () => Promise<Row | undefined>,
    ): Row | undefined | Promise<Row | undefined> {
      const fast = reads.get(db, ...params);
      return fast ? fast.row : slow();
    },
    /** Every row, or undefined when `db` has no fast path. */
    all(db: Db, ...params: Params): Row[] | undefined {
      return run(db, (statement) => statement.all(...params));
    },
    /** Runs a statement that returns no rows: its changes, or undefined when `db` has no fast path. */
    run(db: Db, ...params: Params): SQLite.RunResult | undefined {
      return run(db, (statement) => statement.run(...params));
    },
  };
  return reads;
}

/** How many write statement shapes fastWrite keeps prepared per connection. */
const WRITE_STATEMENTS = 50;
const writeStatements = new WeakMap<SQLite.Database, (text: string) => SQLite.Statement<unknown[]>>();

/**
 * Runs the write statement `text` with positional `params` on the fast path, or answers undefined when `db` has none now. For statements whose text varies with
 * what they write (an update's column list): prepared once per text and connection.
 */
function fastWrite(db: Db, text: string, params: unknown[]): SQLite.RunResult | undefined {
  const connection = fastConnection(db);
  if (!connection) return undefined;
  const { sqlite } = connection;
  let prepare = writeStatements.get(sqlite);
  if (!prepare) {
    prepare = statementCache(WRITE_STATEMENTS, (statement) => sqlite.prepare<unknown[]>(statement));
    writeStatements.set(sqlite, prepare);
  }
  const statement = prepare(text);
  return timed(connection, text, () => statement.run(...params));
}

/** How many query shapes fastRows keeps prepared per connection; the least recently used go. */
const ROW_STATEMENTS = 100;
const rowStatements = new WeakMap<
  SQLite.Database,
  (text: string) => SQLite.Statement<unknown[], unknown[]>
>();

/**
 * The rows of a Kysely query as arrays, in its select list's order, or undefined when `db` has
 * no fast path now. For queries of many rows: better-sqlite3 makes each row object through
 * V8's slow path, which costs more than SQLite's work (1,000 listed notes: 1.7 ms as objects,
 * 1.2 as arrays). Kysely still builds the query, so its SQL is written once. The statements are
 * apart from Kysely's cache, since raw mode is a statement's state.
 */
export function fastRows(db: Db, query: Compilable): unknown[][] | undefined {
  const connection = fastConnection(db);
  if (!connection) return undefined;
  const { sqlite } = connection;
  let prepare = rowStatements.get(sqlite);
  if (!prepare) {
    prepare = statementCache(ROW_STATEMENTS, (text) => sqlite.prepare<unknown[], unknown[]>(text).raw(true));
    rowStatements.set(sqlite, prepare);
  }
  const { sql, parameters } = query.compile();
  const statement = prepare(sql);
  return timed(connection, sql, () => statement.all(...parameters));
}

/** Column names as the stores write them; anything else is a programming error, never input. */
const COLUMN_NAME = /^[a-z_]+$/;

function columnsOf(row: object): string[] {
  const columns = Object.keys(row);
  for (const column of columns)
    if (!COLUMN_NAME.test(column)) throw new Error(`not a column name: ${column}`);
  return columns;
}

/**
 * Inserts `row` into `table` (its own keys are the columns) on the fast path: the row id it
 * got, or undefined when `db` has none now and the Kysely version must run.
 */
export function fastInsert(db: Db, table: string, row: object): { rowid: number } | undefined {
  if (!fastConnection(db)) return undefined;
  const columns = columnsOf(row);
  const text = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
  const result = fastWrite(db, text, Object.values(row));
  return result && { rowid: Number(result.lastInsertRowid) };
}

/**
 * Sets the columns of `patch` on the rows of `table` whose `key` is `value`, on the fast path:
 * how many rows it changed, or undefined when `db` has none now.
 */
export function fastUpdate(
  db: Db,
  table: string,
  patch: object,
  key: string,
  value: unknown,
): { changes: number } | undefined {
  if (!fastConnection(db)) return undefined;
  const columns = columnsOf(patch);
  const text = `UPDATE ${table} SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE ${key} = ?`;
  const result = fastWrite(db, text, [...Object.values(patch), value]);
  return result && { changes: result.changes };
}
