import assert from 'node:assert/strict';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { migrations } from '../../src/db/migrations/index.js';

/**
 * `dataDir`'s SQLite database with every migration before `first` (a migration's name) run, for
 * a test of `first` over the rows an earlier version stored. The caller destroys it before the
 * server or openDatabase runs the rest.
 */
export async function sqliteMigratedBefore(dataDir: string, first: string): Promise<Kysely<unknown>> {
  const db = new Kysely<unknown>({
    dialect: new SqliteDialect({ database: new SQLite(path.join(dataDir, 'notes.db')) }),
  });
  const earlier = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < first));
  const { error } = await new Migrator({
    db,
    provider: { getMigrations: async () => earlier },
  }).migrateToLatest();
  assert.equal(error, undefined);
  return db;
}
