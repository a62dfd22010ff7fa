import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { openDatabase } from '../db/connection.js';
import type { Database } from '../db/schema.js';
import type { Db } from '../db/types.js';
import {
  type AttachmentStorage,
  DirectoryStorage,
  type ExpectedBytes,
} from '../features/attachments/storage.js';
import { attachmentStorageFor } from '../features/attachments/storageFor.js';
import { writeHashed } from '../files.js';
import { indexNote } from '../model/noteWrites.js';
import { type Command, print } from './support.js';

/**
 * The tables copied, parents before children, each with the columns that order its rows the
 * same way on both engines (ids, hex digests and uuids sort alike everywhere). storage_usage is
 * not copied but rebuilt by PostgreSQL's triggers as the rows arrive, and then compared; the
 * search index is rebuilt (notes_fts and notes_search differ). oidc_logins, sign-ons under way for
 * at most ten minutes, is not copied: a sign-on started before the move starts again.
 */
const TABLES: [keyof Database, string[]][] = [
  ['users', ['id']],
  ['sessions', ['token_hash']],
  ['api_keys', ['id']],
  ['mcp_sessions', ['id']],
  ['mcp_subscriptions', ['session_id', 'note_id']],
  ['notes', ['doc_id']],
  ['tags', ['id']],
  ['note_tags', ['note_id', 'tag_id']],
  ['note_collaborators', ['note_id', 'user_id']],
  ['note_tombstones', ['note_id', 'user_id']],
  ['note_revisions', ['note_id', 'version']],
  ['attachments', ['id']],
  ['share_links', ['note_id']],
  ['reminders', ['note_id', 'user_id']],
  ['reminder_rings', ['id']],
  ['push_subscriptions', ['endpoint']],
  ['server_keys', ['name']],
  ['reminder_feeds', ['user_id']],
  ['user_identities', ['issuer', 'subject']],
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

/** Where the attachment bytes come from and go, and a folder for each file on its way. */
interface AttachmentCopy {
  from: AttachmentStorage;
  to: AttachmentStorage;
  workDir: string;
}

/** What the attachment copy did: objects copied and verified, and those already missing at the source. */
interface CopiedAttachments {
  copied: number;
  missing: number;
}

async function sha256Of(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Copies the bytes of every attachment row of the snapshot into the target store, then reads
 * each back and compares its SHA-256 with the source's (files also with the hash their row
 * holds). Objects already there are replaced, so a run after a failure starts clean.
 */
async function copyAttachments(sqlite: SQLite.Database, copy: AttachmentCopy): Promise<CopiedAttachments> {
  const rows = sqlite
    .prepare('SELECT id, size, sha256, thumbnail_path FROM attachments ORDER BY id')
    .all() as {
    id: string;
    size: number;
    sha256: string;
    thumbnail_path: string | null;
  }[];
  // A file must match its row; a thumbnail (no hash in its row) what was read of it.
  const objects: { key: string; expected?: ExpectedBytes }[] = rows.flatMap((row) => [
    { key: `files/${row.id}`, expected: { size: row.size, sha256: row.sha256 } },
    ...(row.thumbnail_path ? [{ key: row.thumbnail_path }] : []),
  ]);
  let copied = 0;
  let missing = 0;
  for (const object of objects) {
    const source = await copy.from.get(object.key);
    if (!source) {
      missing += 1;
      continue;
    }
    // The directory store moves what it is given; the source file stays where it is.
    const staged = path.join(copy.workDir, 'object');
    await fsp.rm(staged, { force: true });
    const received = await writeHashed(source.stream, staged);
    const { expected } = object;
    if (expected && (received.size !== expected.size || received.sha256 !== expected.sha256)) {
      throw new MigrationError(
        `The attachment file ${object.key} in DATA_DIR does not match the size and SHA-256 its row holds; restore it from a backup or delete the attachment, then run again`,
      );
    }
    await copy.to.put(object.key, staged, expected ?? received);
    const stored = await copy.to.get(object.key);
    if (!stored || (await sha256Of(stored.stream)) !== received.sha256) {
      throw new MigrationError(`The attachment object ${object.key} reads back differently after the copy`);
    }
    copied += 1;
  }
  return { copied, missing };
}

/**
 * Copies every row of the SQLite database into the empty PostgreSQL one inside one PostgreSQL
 * transaction, rebuilds the search index, and compares each table's count and digest on both
 * sides before committing: a failure anywhere leaves PostgreSQL as empty as it was, so the
 * command can simply be run again. The SQLite side is read in one read transaction, a
 * consistent snapshot even while a server writes to it. The attachment bytes of that snapshot
 * are copied and verified first, outside the PostgreSQL transaction (they may be in another
 * store); a failed run leaves them without rows, and the next run replaces them.
 */
async function copyToPostgres(
  sqlite: SQLite.Database,
  db: Db,
  attachments: AttachmentCopy,
): Promise<{ digests: Map<string, TableDigest>; attachments: CopiedAttachments }> {
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
    // A read transaction's snapshot begins at its first read.
    const copiedAttachments = await copyAttachments(sqlite, attachments);
    const digests = await db.transaction().execute(async (trx) => {
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
        for (const note of notes) await indexNote(trx, note, 'unknown');
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
    return { digests, attachments: copiedAttachments };
  } catch (error) {
    if (error instanceof MigrationError) throw error;
    throw new MigrationError(
      `The copy failed and PostgreSQL was left empty (attachment bytes it got are replaced by the next run): ${(error as Error).message}`,
    );
  } finally {
    sqlite.prepare('ROLLBACK').run();
  }
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
    // SQLite first, at this version's schema (never migrated by a command, decision 0035); then
    // PostgreSQL is this process's engine, and the empty target gets the schema.
    const source = await openDatabase(config.dataDir, { schema: 'require-current' });
    const workDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'notes-migrate-'));
    try {
      // Imported here: only what uses PostgreSQL loads the pg driver (src/db/postgresShared.ts).
      const { openPostgres } = await import('../db/postgres.js');
      const target = await openPostgres(config.databaseUrl);
      try {
        const to = attachmentStorageFor(config, target.db);
        const { digests, attachments } = await copyToPostgres(source.sqlite, target.db, {
          from: new DirectoryStorage(path.join(config.dataDir, 'attachments')),
          to,
          workDir,
        });
        for (const [table, digest] of digests) print(`${table}: ${digest.rows} rows, same digest on both`);
        const where = to instanceof DirectoryStorage ? to.root : 'the database';
        print(
          `attachment files: ${attachments.copied} copied into ${where}, same SHA-256 on both` +
            (attachments.missing > 0 ? ` (${attachments.missing} were already missing in DATA_DIR)` : ''),
        );
        print('Done. DATA_DIR is left as it was; keep it until the new setup has served a while');
      } finally {
        await target.close();
      }
    } finally {
      await fsp.rm(workDir, { recursive: true, force: true });
      await source.close();
    }
  },
};
