import { setTimeout as sleep } from 'node:timers/promises';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresDriver,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type TransactionSettings,
} from 'kysely';
import pg from 'pg';
import type { OpenDatabase } from './connection.js';
import { prepareSchema } from './connection.js';
import { useEngine } from './dialect.js';
import { isDatabaseOutage } from './outage.js';
import { DatabaseUnreachableError, postgresLocation, WRITE_LOCK_KEY } from './postgresShared.js';
import type { Database } from './schema.js';
import type { DatabaseOptions } from './types.js';

/**
 * The session-level advisory lock the process that runs the hourly maintenance holds on a
 * connection of its own for as long as it lives (decision 0022): the trash purge and the other
 * clean-ups run once across processes, and another process takes over when it stops.
 */
const MAINTENANCE_LOCK_KEY = 7_150_002;

/**
 * How long a query waits for a connection (the pool's turn, then the TCP and login handshake):
 * past it, it fails as unavailable instead of hanging while the database is unreachable.
 */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * A broken connection's 'error' event: what ran on it has failed with the error already, and the
 * pool or the lock below replaces it; the failed requests are logged, not each connection.
 */
function ignoreConnectionError(): void {}

/** SQLSTATE raised by the storage_grew trigger function (migration 0001 on PostgreSQL). */
const QUOTA_EXCEEDED_STATE = 'NQ001';

/** int8 (timestamps, ids, counts) and numeric (sums) as numbers: every value stored fits in 2^53. */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return Number;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/**
 * PostgreSQL at `url` with the application's schema migrated (several processes starting at once
 * migrate once: Kysely's migrator holds an advisory lock while it runs).
 */
export async function openPostgres(url: string, options: DatabaseOptions = {}): Promise<OpenDatabase> {
  useEngine('postgres');
  const quota = options.storageQuotaBytes ?? null;
  const pool = new pg.Pool({
    connectionString: url,
    types,
    max: 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // The storage quota the triggers enforce (migration 0001), for this connection's writes.
    options: quota === null ? undefined : `-c notes.storage_quota_bytes=${quota}`,
  });
  // A connection that breaks (a database restart or stop, a network cut) emits 'error', which
  // would end the process unheard. The pool listens on idle connections only, so every
  // connection gets a listener of its own from the start, for while Kysely has it checked out
  // too: what was running on it fails (503, src/db/outage.ts), the pool drops it, and the next
  // query opens a new one.
  pool.on('connect', (client) => client.on('error', ignoreConnectionError));
  pool.on('error', ignoreConnectionError);
  const { onQuery, storageGrew } = options;
  const driverHooks: DriverHooks = { translate: (error) => translateError(error, storageGrew) };
  const db = new Kysely<Database>({
    dialect: new NotesPostgresDialect(pool, driverHooks),
    ...(onQuery ? { log: (event) => onQuery(event.query.sql, event.queryDurationMillis) } : {}),
  });
  let migrationsRun: string[];
  try {
    await waitUntilReachable(pool, url, options.waitForDatabase);
    migrationsRun = await prepareSchema(db, options.schema);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  // From now on sync_clock exists: every write transaction reads its floor.
  driverHooks.clockFloor = options.clockFloor;
  const maintenanceLock = heldLock(url, MAINTENANCE_LOCK_KEY);
  return {
    db,
    engine: 'postgres',
    async ping() {
      await pool.query('SELECT 1');
    },
    migrationsRun,
    leadsMaintenance: () => maintenanceLock.tryHold(),
    async close() {
      await maintenanceLock.release();
      await db.destroy();
    },
  };
}

/**
 * Connects once, retrying transient failures with doubling delays (0.5 s up to 8 s) until
 * `wait.seconds` have passed: a server started next to its database (compose) waits for it.
 * Whatever the failure, it ends as one readable sentence, never a stack trace.
 */
async function waitUntilReachable(
  pool: pg.Pool,
  url: string,
  wait: DatabaseOptions['waitForDatabase'],
): Promise<void> {
  const deadline = Date.now() + (wait?.seconds ?? 0) * 1000;
  for (let delayMs = 500; ; delayMs = Math.min(delayMs * 2, 8000)) {
    try {
      await pool.query('SELECT 1');
      return;
    } catch (error) {
      const { code, message } = error as { code?: string; message?: string };
      const reason = message || code || 'unknown error';
      const where = postgresLocation(url);
      const transient = isDatabaseOutage(error);
      if (!wait || !transient || Date.now() + delayMs > deadline) {
        const waited = wait && transient ? ` (waited ${wait.seconds} s)` : '';
        throw new DatabaseUnreachableError(`Cannot connect to PostgreSQL at ${where}${waited}: ${reason}`);
      }
      wait.retrying(
        `PostgreSQL at ${where} is not reachable yet (${reason}); trying again in ${delayMs / 1000} s`,
      );
      await sleep(delayMs);
    }
  }
}

/**
 * A session-level advisory lock held on a connection outside the pool: `tryHold` takes it if no
 * other session holds it and keeps it until `release` (or until the connection breaks, when
 * PostgreSQL frees it and the next `tryHold` tries again).
 */
function heldLock(url: string, key: number) {
  let holder: pg.Client | undefined;
  return {
    async tryHold(): Promise<boolean> {
      if (holder) return true;
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
      // Its connection broke (a database restart): the lock went with it; the next tryHold, an
      // hour later, takes it again if no other process has.
      client.on('error', () => {
        if (holder === client) holder = undefined;
      });
      try {
        await client.connect();
        const { rows } = await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1) AS held', [
          key,
        ]);
        if (rows[0]?.held) holder = client;
      } finally {
        if (holder !== client) await client.end().catch(ignoreConnectionError);
      }
      return holder === client;
    },
    async release(): Promise<void> {
      const client = holder;
      holder = undefined;
      await client?.end();
    },
  };
}

/** The storage_grew trigger's refusal becomes the error the quota gives (storageGrew throws it). */
function translateError(error: unknown, storageGrew: DatabaseOptions['storageGrew']): unknown {
  if (error instanceof pg.DatabaseError && error.code === QUOTA_EXCEEDED_STATE && storageGrew) {
    const [userId, bytes] = (error.detail ?? '').split(' ').map(Number);
    try {
      storageGrew(userId!, bytes!);
    } catch (refusal) {
      return refusal;
    }
  }
  return error;
}

/** Kysely's connection class, which it does not export. */
type PostgresConnection = Parameters<PostgresDriver['releaseConnection']>[0];

/** What the driver adds to Kysely's: errors translated, the clock's floor read after the write lock. */
interface DriverHooks {
  translate(error: unknown): unknown;
  clockFloor?: (ms: number) => void;
}

class NotesPostgresDialect implements Dialect {
  constructor(
    private readonly pool: pg.Pool,
    private readonly hooks: DriverHooks,
  ) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new NotesPostgresDriver(this.pool, this.hooks);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}

/**
 * Kysely's driver, with the write lock taken by every transaction (and then the clock's floor
 * read) and database errors translated.
 */
class NotesPostgresDriver extends PostgresDriver {
  readonly #connections = new WeakMap<DatabaseConnection, PostgresConnection>();

  constructor(
    pool: pg.Pool,
    private readonly hooks: DriverHooks,
  ) {
    super({ pool });
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = (await super.acquireConnection()) as PostgresConnection;
    const translated: DatabaseConnection = {
      executeQuery: async (query) => {
        try {
          return await connection.executeQuery(query);
        } catch (error) {
          throw this.hooks.translate(error);
        }
      },
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize ?? 100),
    };
    this.#connections.set(translated, connection);
    return translated;
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    await super.beginTransaction(connection, settings);
    await connection.executeQuery(CompiledQuery.raw(`SELECT pg_advisory_xact_lock(${WRITE_LOCK_KEY})`));
    const { clockFloor } = this.hooks;
    if (clockFloor) {
      const floor = await connection.executeQuery<{ floor_ms: number }>(
        CompiledQuery.raw('SELECT floor_ms FROM sync_clock'),
      );
      clockFloor(floor.rows[0]?.floor_ms ?? 0);
    }
  }

  override async releaseConnection(connection: DatabaseConnection) {
    await super.releaseConnection(this.#connections.get(connection) ?? (connection as PostgresConnection));
  }
}
