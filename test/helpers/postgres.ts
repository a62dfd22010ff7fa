import path from 'node:path';
import pg from 'pg';

/**
 * PostgreSQL for the tests (docs/decisions/0015-postgresql.md): with TEST_DATABASE_URL set (a
 * role that may create databases), every test server gets a fresh database of its own, named
 * after its DATA_DIR, so a server restarted on the same DATA_DIR finds its data again. Without
 * it the tests run on SQLite.
 */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;

/** Whether this run tests PostgreSQL (tests of SQLite-only features skip on it). */
export const onPostgres = testDatabaseUrl !== undefined;

/** The database of the test server with this DATA_DIR. */
function databaseName(dataDir: string): string {
  return path
    .basename(dataDir)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '_');
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The URL of DATA_DIR's database, created empty unless it exists (a restart). */
export async function databaseUrlFor(dataDir: string): Promise<string> {
  const name = databaseName(dataDir);
  await withAdmin(async (client) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  });
  const url = new URL(testDatabaseUrl!);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabaseOf(dataDir: string): Promise<void> {
  await withAdmin((client) =>
    client.query(`DROP DATABASE IF EXISTS "${databaseName(dataDir)}" WITH (FORCE)`),
  );
}

/** Test options that skip a test of SQLite's own files or statements on a PostgreSQL run. */
export const sqliteOnly = { skip: onPostgres && 'SQLite only (a PostgreSQL run)' };
