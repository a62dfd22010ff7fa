import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, type SqliteDatabase, SqliteDialect, sql } from 'kysely';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../fileModes.js';
import { APP_VERSION } from '../version.js';
import { startCheckpointer } from './checkpointer.js';
import { type Engine, engine, useEngine } from './dialect.js';
import { enableFastPaths } from './fastPath.js';
import { enableGroupCommit } from './groupCommit.js';
import { migrationsFor } from './migrations/index.js';
import type { Database } from './schema.js';
import { statementCache } from './statementCache.js';
import type { DatabaseOptions, Db, SchemaPolicy } from './types.js';

export interface OpenDatabase {
  db: Db;
  engine: Engine;
  /**
   * Liveness probe for /api/health: `SELECT 1` on the connection itself, not through Kysely,
   * which runs one query or transaction at a time on SQLite; a sync push holds the connection
   * for seconds, and health must answer meanwhile (0006). Throws when the database is closed.
   */
  ping(): void | Promise<void>;
  /** The migrations this opening ran (none unless it was opened with `schema: 'migrate'`). */
  migrationsRun: string[];
  /**
   * Whether this process runs the hourly maintenance: on SQLite always (one process); on
   * PostgreSQL the one process holding the maintenance lock, until it stops (decision 0022).
   */
  leadsMaintenance(): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenSqliteDatabase extends OpenDatabase {
  /** The raw handle, for the few SQLite-only operations (backups, checkpoints). */
  sqlite: SQLite.Database;
}

/**
 * The functions the schema calls (its triggers, its queries): any connection that writes to
 * notes.db needs them, not only the server's.
 */
export function registerFunctions(
  sqlite: SQLite.Database,
  storageGrew?: DatabaseOptions['storageGrew'],
): void {
  // Unicode-aware lower case (SQLite's lower() only folds ASCII); see containsIgnoringCase.
  sqlite.function('fold_case', { deterministic: true }, (value: unknown) =>
    typeof value === 'string' ? value.toLowerCase() : value,
  );
  sqlite.function('storage_grew', { deterministic: false }, (userId: unknown, bytes: unknown) => {
    storageGrew?.(Number(userId), Number(bytes));
    return null;
  });
}

/** Opens (creating if needed) DATA_DIR/notes.db in WAL mode with foreign keys on (D-OPS-3). */
export async function openDatabase(
  dataDir: string,
  options: DatabaseOptions = {},
): Promise<OpenSqliteDatabase> {
  useEngine('sqlite');
  fs.mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const file = path.join(dataDir, 'notes.db');
  // SQLite would create the file 0644; it gives -wal and -shm the mode of the database file.
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE_MODE));
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  registerFunctions(sqlite, options.storageGrew);
  const { onQuery } = options;
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: withStatementCache(sqlite) }),
    ...(onQuery ? { log: (event) => onQuery(event.query.sql, event.queryDurationMillis) } : {}),
  });
  let migrationsRun: string[];
  try {
    migrationsRun = await prepareSchema(db, options.schema);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  // The search index's terms, for a search's last word (features/search): per connection, so
  // that it is no part of the schema, backups or migrations.
  sqlite.exec('CREATE VIRTUAL TABLE temp.notes_fts_vocab USING fts5vocab(main, notes_fts, row)');
  enableFastPaths(db, sqlite, onQuery);
  enableGroupCommit(db);
  // Checkpoints happen in a worker, off the event loop; if it dies, SQLite's own come back.
  sqlite.pragma('wal_autocheckpoint = 0');
  const totalChanges = sqlite.prepare('SELECT total_changes()').pluck();
  const checkpointer = startCheckpointer(
    file,
    () => totalChanges.get() as number,
    () => sqlite.pragma('wal_autocheckpoint = 1000'),
  );
  return {
    db,
    engine: 'sqlite',
    sqlite,
    ping() {
      sqlite.prepare('SELECT 1').get();
    },
    migrationsRun,
    leadsMaintenance: async () => true,
    async close() {
      await checkpointer.stop();
      await db.destroy();
    },
  };
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew, and compiling SQL is a large part of a simple request
 * (docs/benchmarks.md), so statements are kept by their text, the least recently used dropped
 * past STATEMENT_CACHE_SIZE. Kysely runs one query at a time on the connection, so a cached
 * statement is never in use twice at once.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  return {
    close: () => sqlite.close(),
    prepare: statementCache(STATEMENT_CACHE_SIZE, (text) => sqlite.prepare(text)),
  };
}

/**
 * The database's schema is not this build's: a newer build migrated it, or it lacks this build's
 * newest migrations. Its message is one sentence for the person running the server or command.
 */
export class SchemaMismatchError extends Error {}

/** Migrates or checks the schema as `policy` says; returns the migrations run. */
export async function prepareSchema(db: Db, policy: SchemaPolicy = 'migrate'): Promise<string[]> {
  if (policy === 'migrate') return migrate(db);
  await requireCurrentSchema(db);
  return [];
}

const migrator = (db: Db) =>
  new Migrator({ db, provider: { getMigrations: async () => migrationsFor(engine()) } });

/** The names of the migrations the database records as run, oldest first; none on a new database. */
async function migrationsRecorded(db: Db): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((table) => table.name === 'kysely_migration')) return [];
  const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db);
  return rows.map((row) => row.name);
}

/**
 * Refuses a database migrated by a newer build (a migration this one does not know): running
 * against it would break on the newer schema, and the older build must not write to it.
 */
function refuseNewerSchema(recorded: string[]): void {
  const known = migrationsFor(engine());
  const unknown = recorded.filter((name) => !(name in known));
  if (unknown.length > 0) {
    throw new SchemaMismatchError(
      `The database was migrated by a newer version than this one (${APP_VERSION}, which does not know migration ${unknown.join(', ')}): run that newer version, or restore the backup taken before the upgrade (docs/deploy.md, "Rolling back")`,
    );
  }
}

/** Throws SchemaMismatchError unless the database has run exactly this build's migrations. */
async function requireCurrentSchema(db: Db): Promise<void> {
  const recorded = await migrationsRecorded(db);
  refuseNewerSchema(recorded);
  const pending = Object.keys(migrationsFor(engine())).filter((name) => !recorded.includes(name));
  if (pending.length === 0) return;
  throw new SchemaMismatchError(
    recorded.length === 0
      ? 'The database has not been set up yet: start the server once, or run the "migrate" command, then run this command again'
      : `The database's schema is older than this version (${APP_VERSION}) expects (${pending.length} migrations from ${pending[0]} not run): commands never migrate, so upgrade it by starting this version's server or with the "migrate" command (docs/deploy.md, "Upgrading")`,
  );
}

/** Runs the migrations not run yet (D-OPS-3), on either engine; returns their names. */
async function migrate(db: Db): Promise<string[]> {
  refuseNewerSchema(await migrationsRecorded(db));
  const { error, results } = await migrator(db).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`Database migration ${failed?.migrationName ?? ''} failed: ${reason}`);
  }
  return (results ?? []).map((r) => r.migrationName);
}
