import { AppError, errors } from '../errors.js';

/**
 * The one rule that says which errors mean a store the server needs is out of reach for now, not
 * that the request or the server is wrong (issue 26): requests then answer 503 `unavailable` with
 * Retry-After instead of 500, and the process goes on until the store is back. The drivers tell
 * these apart only by their shape, so each kind is listed here, once.
 */

/**
 * Socket errors of a connection to the database that cannot be opened or was cut. Only those of
 * a system call (connect, read, write, getaddrinfo): a client that aborts its own request gets
 * an ECONNRESET without one, and that is no outage.
 */
const UNREACHABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL's SQLSTATEs for a server going away or not taking connections yet: class 08
 * (connection exception), 57P01–57P03 (shut down by an administrator or a crash, starting up or
 * shutting down) and 53300 (too many connections).
 */
const UNREACHABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;

/**
 * node-postgres's own errors for a connection that ended, failed or could not be had from the
 * pool in time (connectionTimeoutMillis); they carry no code.
 */
const POSTGRES_CONNECTION_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'timeout exceeded when trying to connect',
];

/**
 * ioredis's errors for a command that found no connection: sent while it reconnects (no offline
 * queue, src/app.ts), cut off with it, out of retries, or not answered in time (commandTimeout).
 */
const REDIS_CONNECTION_ERRORS = new Set(['MaxRetriesPerRequestError']);
const REDIS_CONNECTION_MESSAGES = [
  "Stream isn't writeable and enableOfflineQueue options is false",
  'Connection is closed.',
  'Command timed out',
];

function outageOf(error: unknown): 'database' | 'redis' | undefined {
  if (!(error instanceof Error)) return undefined;
  // A host name with several addresses (localhost: ::1 and 127.0.0.1) fails with each one's error.
  if (error instanceof AggregateError) {
    return error.errors.some((each) => outageOf(each) === 'database') ? 'database' : undefined;
  }
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  if (REDIS_CONNECTION_ERRORS.has(error.name) || REDIS_CONNECTION_MESSAGES.includes(error.message)) {
    return 'redis';
  }
  if (typeof code === 'string') {
    if (UNREACHABLE_ERRNOS.has(code) && typeof syscall === 'string') return 'database';
    if (UNREACHABLE_SQLSTATE.test(code)) return 'database';
    // SQLite: another process (a backup, the sqlite3 shell) held the write lock past busy_timeout.
    if (code.startsWith('SQLITE_BUSY')) return 'database';
  }
  if (POSTGRES_CONNECTION_MESSAGES.some((message) => error.message.startsWith(message))) return 'database';
  return undefined;
}

/** Whether `error` says the database is out of reach for now (the server's start waits for it). */
export const isDatabaseOutage = (error: unknown): boolean => outageOf(error) === 'database';

/**
 * The catalogue's error for `error`: itself when it is one, `unavailable` when it says a store is
 * out of reach, else undefined (a fault of the server's own: 500).
 */
export function asAppError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  const outage = outageOf(error);
  return outage ? errors.unavailable(outage) : undefined;
}
