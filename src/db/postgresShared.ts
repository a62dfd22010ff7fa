/**
 * What code running on either engine knows of PostgreSQL, in a module that does not load the pg
 * driver: `pg` and what it loads (undici, tls) are ~15 MiB of RSS that a server on SQLite does
 * without (docs/benchmarks.md, "Issue 31: idle memory, time-ordered note ids"), so
 * src/db/postgres.ts is imported only when DATABASE_URL is set.
 */

/**
 * The advisory lock every write transaction holds (docs/decisions/0015-postgresql.md): writes
 * commit one at a time across all server processes, as SQLite's single writer does, so the
 * services' read-then-write rules (versions, three-way merges, quotas) need no retry loops and
 * behave the same on both engines. Reads are not locked and run in parallel.
 */
export const WRITE_LOCK_KEY = 7_150_001;

/** Where a PostgreSQL URL points, for logs and messages: `host:port/database`, never the password. */
export function postgresLocation(url: string): string {
  const { hostname, port, pathname } = new URL(url);
  return `${hostname}:${port || '5432'}/${decodeURIComponent(pathname.slice(1)) || '(default database)'}`;
}

/** PostgreSQL could not be reached or refused the connection; the message is one sentence. */
export class DatabaseUnreachableError extends Error {}
