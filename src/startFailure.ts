import { SchemaMismatchError } from './db/connection.js';
import { DatabaseUnreachableError } from './db/postgresShared.js';

/**
 * Exit codes of the server and its commands (docs/deploy.md, "Exit codes"): 0 done, 1 failed,
 * 2 used wrongly, 3 the database's schema is not this version's (decision 0035).
 */
const EXIT_FAILED = 1;
const EXIT_SCHEMA_MISMATCH = 3;

/**
 * What a person reads when the database cannot be used (one sentence, no stack trace) and the
 * exit code; null for any other error, which is a bug and keeps its stack.
 */
export function databaseFailure(err: unknown): { message: string; exitCode: number } | null {
  if (err instanceof SchemaMismatchError) return { message: err.message, exitCode: EXIT_SCHEMA_MISMATCH };
  if (err instanceof DatabaseUnreachableError) return { message: err.message, exitCode: EXIT_FAILED };
  return null;
}

/** How the server's start ends when building the app fails. */
export function startFailure(err: unknown): { message: string; exitCode: number } {
  return (
    databaseFailure(err) ?? {
      message: `Could not start the server: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      exitCode: EXIT_FAILED,
    }
  );
}
