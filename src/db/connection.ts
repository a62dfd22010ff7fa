import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, type SqliteDatabase, SqliteDialect } from 'kysely';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../fileModes.js';
import { startCheckpointer } from './checkpointer.js';
import { type Engine, engine, useEngine } from './dialect.js';
import { enableFastPaths } from './fastPath.js';
import { enableGroupCommit } from './groupCommit.js';
import { migrationsFor } from './migrations/index.js';
import type { Database } from './schema.js';
import { statementCache } from './statementCache.js';
import type { DatabaseOptions, Db } from './types.js';

export interface OpenDatabase {
  db: Db;
  engine: Engine;
  /**
   * Liveness probe for /api/health: `SELECT 1` on the connection itself, not through Kysely,
   * which runs one query or transaction at a time on SQLite; a sync push holds the connection
   * for seconds, and health must answer meanwhile (0006). Throws when the database is closed.
   */
  ping(): void | Promise<void>;
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
  await migrate(db);
  // The search index's terms, for a search's last word (features/search): per connection, so
  // that it is no part of the schema, backups or migrations.
  sqlite.exec('CREATE VIRTUAL TABLE temp.notes_fts_vocab USING fts5vocab(main, notes_fts, row)');
  enableFastPaths(db, sqlite, onQuery);
  enableGroupCommit(db);
  // Checkpoints happen in a worker, off the event loop; if it dies, SQLite's own come back.
  sqlite.pragma('wal_autocheckpoint = 0');
  const checkpointer = startCheckpointer(file, () => sqlite.pragma('wal_autocheckpoint = 1000'));
  return {
    db,
    engine: 'sqlite',
    sqlite,
    ping() {
      sqlite.prepare('SELECT 1').get();
    },
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

/** Runs the migrations not run yet (D-OPS-3), on either engine. */
export async function migrate(db: Db): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrationsFor(engine()) },
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`Database migration ${failed?.migrationName ?? ''} failed: ${reason}`);
  }
}
