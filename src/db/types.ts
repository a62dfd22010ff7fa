import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** The database handle every store and service takes, on either engine. */
export type Db = Kysely<Database>;

/**
 * `migrate` runs the migrations the database lacks (the server's start, the `migrate` command);
 * `require-current` only checks that the database has exactly this build's migrations and
 * throws SchemaMismatchError otherwise (every other command, decision 0035).
 */
export type SchemaPolicy = 'migrate' | 'require-current';

export interface DatabaseOptions {
  /** What to do with the schema (SchemaPolicy). Default: migrate. */
  schema?: SchemaPolicy;
  /**
   * PostgreSQL only: keep trying to connect for this long while the database is unreachable,
   * telling `retrying` before each wait (the server's start); absent: fail at once (commands).
   */
  waitForDatabase?: { seconds: number; retrying(message: string): void };
  /** Called with the SQL and duration of every statement run (tests count queries, metrics time them). */
  onQuery?: (sql: string, durationMs: number) => void;
  /**
   * Called by the storage_usage triggers (migration 0008) inside every write that grows a
   * user's stored bytes, with the new total; throwing refuses the write (the storage quota).
   * better-sqlite3 rethrows the very error thrown here, so it reaches the caller unchanged.
   */
  storageGrew?: (userId: number, bytes: number) => void;
  /**
   * PostgreSQL only: the quota its triggers hold each user's usage to; past it they raise an
   * error that becomes storageGrew's (postgres.ts). null: no quota.
   */
  storageQuotaBytes?: number | null;
  /**
   * PostgreSQL only: called inside every write transaction, once it holds the write lock, with
   * the floor its time stamps must not go below (sync_clock; decision 0016). The server's clock
   * advances to it.
   */
  clockFloor?: (ms: number) => void;
}
