import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { type Command, print } from '../commandSupport.js';
import { keysOf } from '../features/attachments/service.js';
import { indexNote } from '../features/notes/writes.js';
import { type Db, openDatabase } from './connection.js';
import { openPostgres } from './postgres.js';
import type { Database } from './schema.js';

/**
 * The tables copied, parents before children, each with the columns that order its rows the
 * same way on both engines (ids, hex digests and uuids sort alike everywhere). storage_usage is
 * not copied but rebuilt by PostgreSQL's triggers as the rows arrive, and then compared; the
 * search index is rebuilt (notes_fts and notes_search differ).
 */
const TABLES: [keyof Database, string[]][] = [
  ['users', ['id']],
  ['sessions', ['token_hash']],
  ['api_keys', ['id']],
  ['mcp_sessions', ['id']],
  ['notes', ['doc_id']],
  ['tags', ['id']],
  ['note_tags', ['note_id', 'tag_id']],
  ['note_collaborators', ['note_id', 'user_id']],
  ['note_tombstones', ['note_id', 'user_id']],
  ['note_revisions', ['note_id', 'version']],
  ['attachments', ['id']],
  ['share_links', ['note_id']],
];
const DERIVED: [keyof Database, string[]] = ['storage_usage', ['user_id']];
/** Identity columns whose sequences must continue after the copied ids. */
const IDENTITIES: [keyof Database, string][] = [
  ['users', 'id'],
  ['notes', 'doc_id'],
  ['tags', 'id'],
];
const BATCH = 1_000;

export class MigrationError extends Error {}

/** Row count and SHA-256 of a table's rows in key order, each row as JSON with sorted keys. */
interface TableDigest {
  rows: number;
  sha256: string;
}

function digestOf(batches: Iterable<Record<string, unknown>[]>): TableDigest {
  const hash = createHash('sha256');
  let rows = 0;
  for (const batch of batches) {
    for (const row of batch) {
      hash.update(
        JSON.stringify(
          Object.keys(row)
            .sort()
            .map((key) => [key, row[key]]),
        ),
      );
      hash.update('\n');
      rows += 1;
    }
  }
  return { rows, sha256: hash.digest('hex') };
}

function* sqliteBatches(sqlite: SQLite.Database, table: string, order: string[]) {
  const statement = sqlite.prepare(`SELECT * FROM ${table} ORDER BY ${order.join(', ')} LIMIT ? OFFSET ?`);
  for (let offset = 0; ; offset += BATCH) {
    const rows = statement.all(BATCH, offset) as Record<string, unknown>[];
    if (rows.length > 0) yield rows;
    if (rows.length < BATCH) return;
  }
}

async function postgresRows(db: Db, table: keyof Database, order: string[]) {
  const batches: Record<string, unknown>[][] = [];
  for (let offset = 0; ; offset += BATCH) {
    const rows = await sql<Record<string, unknown>>`
      SELECT * FROM ${sql.table(table)} ORDER BY ${sql.join(order.map((c) => sql.ref(c)))}
      LIMIT ${BATCH} OFFSET ${offset}`.execute(db);
    if (rows.rows.length > 0) batches.push(rows.rows);
    if (rows.rows.length < BATCH) return batches;
  }
}

/**
 * Copies every row of the SQLite database into the empty PostgreSQL one inside one PostgreSQL
 * transaction, rebuilds the search index, and compares each table's count and digest on both
 * sides before committing: a failure anywhere leaves PostgreSQL as empty as it was, so the
 * command can simply be run again. The SQLite side is read in one read transaction, a
 * consistent snapshot even while a server writes to it.
 */
export async function copyToPostgres(sqlite: SQLite.Database, db: Db): Promise<Map<string, TableDigest>> {
  const users = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  if (users.count > 0) {
    throw new MigrationError(
      'The PostgreSQL database already holds data; this command only fills an empty one',
    );
  }
  const nul = sqlite
    .prepare(
      `SELECT id FROM notes WHERE instr(title, char(0)) > 0 OR instr(content, char(0)) > 0
       UNION SELECT note_id FROM note_revisions WHERE instr(title, char(0)) > 0 OR instr(content, char(0)) > 0
       LIMIT 5`,
    )
    .pluck()
    .all() as string[];
  if (nul.length > 0) {
    throw new MigrationError(
      `PostgreSQL cannot store U+0000, found in the text of notes ${nul.join(', ')} (or their revisions); edit them first`,
    );
  }
  sqlite.prepare('BEGIN').run();
  try {
    return await db.transaction().execute(async (trx) => {
      const digests = new Map<string, TableDigest>();
      for (const [table, order] of TABLES) {
        const copied: Record<string, unknown>[][] = [];
        for (const rows of sqliteBatches(sqlite, table, order)) {
          await trx
            .insertInto(table)
            .values(rows as never)
            .execute();
          copied.push(rows);
        }
        digests.set(table, digestOf(copied));
      }
      for (const [table, column] of IDENTITIES) {
        await sql`SELECT setval(pg_get_serial_sequence(${table}, ${column}),
          (SELECT coalesce(max(${sql.ref(column)}), 0) + 1 FROM ${sql.table(table)}), false)`.execute(trx);
      }
      for (const rows of sqliteBatches(sqlite, 'notes', ['doc_id'])) {
        const notes = await trx
          .selectFrom('notes')
          .selectAll()
          .where(
            'doc_id',
            'in',
            rows.map((row) => row.doc_id as number),
          )
          .execute();
        for (const note of notes) await indexNote(trx, note, false);
      }
      digests.set(DERIVED[0], digestOf(sqliteBatches(sqlite, ...DERIVED)));
      for (const [table, order] of [...TABLES, DERIVED]) {
        const target = digestOf(await postgresRows(trx, table, order));
        const source = digests.get(table)!;
        if (target.rows !== source.rows || target.sha256 !== source.sha256) {
          throw new MigrationError(
            `${table} differs after the copy (${source.rows} rows in SQLite, ${target.rows} in PostgreSQL); nothing was kept`,
          );
        }
      }
      return digests;
    });
  } catch (error) {
    if (error instanceof MigrationError) throw error;
    throw new MigrationError(`The copy failed and PostgreSQL was left empty: ${(error as Error).message}`);
  } finally {
    sqlite.prepare('ROLLBACK').run();
  }
}

/** Attachment files the rows name that are not in DATA_DIR/attachments (already missing before). */
function missingFiles(sqlite: SQLite.Database, dataDir: string): number {
  const rows = sqlite.prepare('SELECT id, thumbnail_path FROM attachments').all() as {
    id: string;
    thumbnail_path: string | null;
  }[];
  return rows.flatMap(keysOf).filter((key) => !fs.existsSync(path.join(dataDir, 'attachments', key))).length;
}

/** `migrate-to-postgres`: DATA_DIR's SQLite database into the empty PostgreSQL of DATABASE_URL. */
export const migrateToPostgresCommand: Command = {
  usage: 'migrate-to-postgres',
  summary:
    "Copies DATA_DIR's SQLite database into the empty PostgreSQL database of DATABASE_URL, verifying every table",
  options: {},
  async run(config) {
    if (config.databaseUrl === null)
      throw new MigrationError('Set DATABASE_URL to the PostgreSQL database to fill');
    if (!fs.existsSync(path.join(config.dataDir, 'notes.db'))) {
      throw new MigrationError(`There is no SQLite database in ${config.dataDir} to copy`);
    }
    // SQLite first: it is brought up to the latest migration, then PostgreSQL is this process's engine.
    const source = await openDatabase(config.dataDir);
    try {
      const target = await openPostgres(config.databaseUrl);
      try {
        const digests = await copyToPostgres(source.sqlite, target.db);
        for (const [table, digest] of digests) print(`${table}: ${digest.rows} rows, same digest on both`);
        const missing = missingFiles(source.sqlite, config.dataDir);
        print(
          `Done. Attachment files stay in ${path.join(config.dataDir, 'attachments')}` +
            (missing > 0 ? ` (${missing} were already missing there)` : ''),
        );
      } finally {
        await target.close();
      }
    } finally {
      await source.close();
    }
  },
};
