import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { NOTE_ID_PATTERN } from '../../shared/noteIds.js';
import { engine } from '../dialect.js';

/**
 * Notes whose id is not a UUID (imports stored ids such as `../x`, `` or 200,000 characters as
 * given, before src/shared/noteIds.ts) get a new random one, carried to every row that names
 * the note: each column with a foreign key to notes (tags, collaborators, revisions,
 * attachments, share links, and whatever later tables add) and the tombstones. The note counts
 * as changed now, so devices pull it under its new id, and a tombstone of the old id, for the
 * owner and each collaborator, takes the old copy off their devices. Nothing to do, nothing done.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const found = await sql<{ id: string }>`
    SELECT id FROM notes WHERE ${engine() === 'sqlite' ? sql`NOT (id GLOB ${sqliteGlob()})` : sql`id !~ ${NOTE_ID_PATTERN}`}
  `.execute(db);
  if (found.rows.length === 0) return;
  const renames = found.rows.map(({ id }) => ({ from: id, to: randomUUID() }));
  if (engine() === 'sqlite') {
    // The migrator runs SQLite's migrations outside a transaction: this one is all or nothing.
    await db.transaction().execute(async (trx) => {
      // Checked at commit instead, when every row names the new ids.
      await sql`PRAGMA defer_foreign_keys = ON`.execute(trx);
      await renameNotes(trx, renames, await sqliteReferences(trx));
    });
  } else {
    // PostgreSQL's foreign keys cannot wait for the commit: dropped, then added back as they were.
    const references = await postgresReferences(db);
    for (const { table, name } of references) {
      await sql`ALTER TABLE ${sql.table(table)} DROP CONSTRAINT ${sql.id(name)}`.execute(db);
    }
    await renameNotes(db, renames, references);
    for (const { table, name, definition } of references) {
      await sql`ALTER TABLE ${sql.table(table)} ADD CONSTRAINT ${sql.id(name)} ${sql.raw(definition)}`.execute(
        db,
      );
    }
  }
}

interface Reference {
  table: string;
  column: string;
}

/** NOTE_ID_PATTERN as a GLOB (SQLite has no regular expressions; GLOB is case-sensitive). */
function sqliteGlob(): string {
  return [8, 4, 4, 4, 12].map((length) => '[0-9a-f]'.repeat(length)).join('-');
}

async function sqliteReferences(db: Kysely<unknown>): Promise<Reference[]> {
  const found = await sql<Reference>`
    SELECT m.name AS "table", f."from" AS "column"
    FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
    WHERE m.type = 'table' AND f."table" = 'notes'`.execute(db);
  return found.rows;
}

async function postgresReferences(
  db: Kysely<unknown>,
): Promise<(Reference & { name: string; definition: string })[]> {
  const found = await sql<Reference & { name: string; definition: string }>`
    SELECT c.conrelid::regclass::text AS "table", a.attname AS "column", c.conname AS name,
      pg_get_constraintdef(c.oid) AS definition
    FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    WHERE c.contype = 'f' AND c.confrelid = 'notes'::regclass`.execute(db);
  return found.rows;
}

async function renameNotes(
  db: Kysely<unknown>,
  renames: { from: string; to: string }[],
  references: Reference[],
): Promise<void> {
  const newest = await sql<{ ms: number | string | null }>`SELECT max(updated_at) AS ms FROM notes`.execute(
    db,
  );
  const floor =
    engine() === 'postgres'
      ? Number(
          (await sql<{ ms: string }>`SELECT floor_ms AS ms FROM sync_clock`.execute(db)).rows[0]?.ms ?? 0,
        )
      : 0;
  // After every stamp so far, so that a device's next pull sees the change (D-SYNC-1).
  const now = Math.max(Date.now(), Number(newest.rows[0]?.ms ?? 0) + 1, floor + 1);
  for (const { from, to } of renames) {
    await sql`UPDATE notes SET id = ${to}, updated_at = ${now} WHERE id = ${from}`.execute(db);
    for (const { table, column } of [...references, { table: 'note_tombstones', column: 'note_id' }]) {
      await sql`UPDATE ${sql.table(table)} SET ${sql.ref(column)} = ${to} WHERE ${sql.ref(column)} = ${from}`.execute(
        db,
      );
    }
    await sql`
      INSERT INTO note_tombstones (note_id, user_id, deleted_at)
      SELECT ${from}, owner_id, CAST(${now} AS BIGINT) FROM notes WHERE id = ${to}
      UNION SELECT ${from}, user_id, CAST(${now} AS BIGINT) FROM note_collaborators WHERE note_id = ${to}`.execute(
      db,
    );
  }
}
