/**
 * The write fast paths (src/db/fastPath.ts: a note's insert, update, tags, search document,
 * revisions and their pruning run as prepared statements inside the write transactions of
 * db/transaction.ts) leave exactly the rows their Kysely versions leave. The same script of
 * writes runs on three fresh databases: in group commit's transactions and in transactions of
 * their own (the fast paths), and in plain Kysely transactions (as on PostgreSQL); then every
 * table it touches is compared.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Actor } from '../src/actor.js';
import { type OpenSqliteDatabase, openDatabase } from '../src/db/connection.js';
import type { WriteWork } from '../src/db/groupCommit.js';
import { transaction } from '../src/db/transaction.js';
import type { Db } from '../src/db/types.js';
import { reminderStamp } from '../src/features/reminders/store.js';
import { requireNoteAccess } from '../src/model/noteAccess.js';
import type { NoteFields } from '../src/model/noteFields.js';
import { noteExists } from '../src/model/notes.js';
import { applyNoteFields, insertNote } from '../src/model/noteWrites.js';
import { REVISIONS_KEPT } from '../src/model/revisions.js';
import { insertUser } from '../src/model/users.js';
import { sqliteOnly } from './helpers/postgres.js';
import { tempDataDir } from './helpers/server.js';

const NOTE_ID = '6f1c0c8e-3a52-4d0e-9d7e-2b6c1f0a9e01';
const OTHER_ID = '6f1c0c8e-3a52-4d0e-9d7e-2b6c1f0a9e02';
const DAY = 86_400_000;

/** How a script's write transaction runs: group commit (the fast paths) or a plain one (Kysely). */
type Run = <T>(db: Db, work: WriteWork<T>) => Promise<T>;
const grouped: Run = (db, work) => transaction(db, work, { group: true });
const alone: Run = (db, work) => transaction(db, work, { group: false });
const plain: Run = (db, work) => db.transaction().execute(work);

/** Every row of the tables a note's writes touch, in a fixed order. */
async function rowsOf(db: Db) {
  const all = async (query: string) => (await sql.raw<Record<string, unknown>>(query).execute(db)).rows;
  return {
    notes: await all('SELECT * FROM notes ORDER BY doc_id'),
    tags: await all('SELECT * FROM tags ORDER BY id'),
    noteTags: await all('SELECT * FROM note_tags ORDER BY note_id, tag_id'),
    revisions: await all('SELECT * FROM note_revisions ORDER BY note_id, version'),
    // The index holds no text (migration 0017): what it knows is each term's places.
    search: await searchIndexEntries(db),
    storage: await all('SELECT * FROM storage_usage ORDER BY user_id'),
  };
}

/** Every term of notes_fts with the document, column and position it is at. */
async function searchIndexEntries(db: Db) {
  await sql`CREATE VIRTUAL TABLE IF NOT EXISTS temp.notes_fts_entries USING fts5vocab(main, notes_fts, instance)`.execute(
    db,
  );
  const entries = await sql<Record<string, unknown>>`
    SELECT term, doc, col, offset FROM temp.notes_fts_entries ORDER BY doc, col, offset`.execute(db);
  return entries.rows;
}

describe('write fast paths', sqliteOnly, () => {
  let fast: OpenSqliteDatabase;
  let fastAlone: OpenSqliteDatabase;
  let kysely: OpenSqliteDatabase;
  const fastStatements: string[] = [];
  const fastAloneStatements: string[] = [];
  const kyselyStatements: string[] = [];
  before(async () => {
    fast = await openDatabase(tempDataDir(), { onQuery: (text) => fastStatements.push(text) });
    fastAlone = await openDatabase(tempDataDir(), { onQuery: (text) => fastAloneStatements.push(text) });
    kysely = await openDatabase(tempDataDir(), { onQuery: (text) => kyselyStatements.push(text) });
  });
  after(async () => {
    await fast?.close();
    await fastAlone?.close();
    await kysely?.close();
  });

  /** Creates a note, edits it past the revisions kept (pruning some), and another note. */
  async function script(db: Db, run: Run): Promise<void> {
    const user = await insertUser(db, {
      email: 'fast@example.com',
      display_name: 'Fast',
      password_hash: 'x',
      is_owner: 1,
      created_at: 0,
    });
    const actor: Actor = { userId: user.id, isOwner: true, via: 'session', scopes: new Set(['notes:write']) };
    const create = (id: string, values: Partial<NoteFields>, now: number) =>
      run(db, async (trx) => {
        assert.equal(await noteExists(trx, id), false);
        await insertNote(trx, { ownerId: user.id, authorId: user.id, id, values, now, stampedAt: now });
        assert.equal(await noteExists(trx, id), true);
      });
    const edit = (id: string, values: Partial<NoteFields>, now: number) =>
      run(db, async (trx) => {
        const { note } = await requireNoteAccess(trx, actor, id, 'edit');
        await applyNoteFields(trx, note, values, { now, stampedAt: now, authorId: user.id });
      });
    await create(NOTE_ID, { title: 'Plans #work', content: 'call #home', pinned: true }, 1_000);
    await create(OTHER_ID, { title: 'Other', content: 'no tags', trashed: true }, 2_000);
    await edit(NOTE_ID, { title: 'Plans for #work' }, 3_000); // the same hashtags
    await edit(NOTE_ID, { content: 'call #family' }, 4_000); // a hashtag replaced
    await edit(NOTE_ID, { color: 'mint', sortOrder: 5 }, 5_000); // no text
    await edit(NOTE_ID, { pinned: true }, 6_000); // nothing changes: only the stamp
    await edit(OTHER_ID, { trashed: false, title: 'Other #back' }, 7_000);
    // Past the revisions kept, each older than the retention window once the last edit comes.
    for (let n = 0; n < REVISIONS_KEPT; n++) await edit(NOTE_ID, { content: `edit ${n} #family` }, 8_000 + n);
    await edit(NOTE_ID, { content: 'long after #family' }, 8_000 + 40 * DAY);
  }

  it("leave the rows their Kysely versions leave, and run in the write transactions' own (grouped or not)", async () => {
    await script(fast.db, grouped);
    await script(fastAlone.db, alone);
    await script(kysely.db, plain);
    const fastRows = await rowsOf(fast.db);
    assert.deepEqual(fastRows, await rowsOf(kysely.db));
    assert.deepEqual(await rowsOf(fastAlone.db), fastRows);
    // The script reached what it compares: tags replaced, revisions pruned to those kept.
    assert.deepEqual(
      fastRows.tags.map((tag) => tag.name),
      ['work', 'family', 'back'],
    );
    assert.equal(fastRows.revisions.filter((r) => r.note_id === NOTE_ID).length, REVISIONS_KEPT);
    // Each side ran what it is meant to: the prepared statements, or Kysely's.
    const ran = (statements: string[], start: string) => statements.some((text) => text.startsWith(start));
    for (const start of [
      'INSERT INTO notes (',
      'UPDATE notes SET',
      'INSERT INTO note_revisions',
      'DELETE FROM note_revisions',
      'INSERT INTO note_tags',
      'SELECT id FROM notes WHERE',
    ]) {
      assert.ok(ran(fastStatements, start), `the fast path ran ${start}`);
      assert.ok(ran(fastAloneStatements, start), `the fast path ran ${start} in a transaction of its own`);
      assert.ok(!ran(kyselyStatements, start), `Kysely's version ran instead of ${start}`);
    }
    for (const start of [
      'insert into "notes"',
      'update "notes"',
      'insert into "note_revisions"',
      'delete from "note_revisions"',
    ])
      assert.ok(ran(kyselyStatements, start), `Kysely ran ${start}`);
  });

  it('reminderStamp answers as its Kysely version (which runs inside a plain transaction)', async () => {
    const { db } = kysely;
    const userId = (await db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
    const kyselyStamp = () => db.transaction().execute((trx) => reminderStamp(trx, userId));
    assert.deepEqual(await reminderStamp(db, userId), { rows: 0, revisions: 0 });
    assert.deepEqual(await kyselyStamp(), { rows: 0, revisions: 0 });
    for (const [noteId, revision] of [
      [NOTE_ID, 3],
      [OTHER_ID, 4],
    ] as const) {
      await db
        .insertInto('reminders')
        .values({
          note_id: noteId,
          user_id: userId,
          at: 1,
          repeat: 'none',
          time_zone: 'UTC',
          next_at: 1,
          stamped_at: 1,
          changed_at: 1,
          revision,
        })
        .execute();
    }
    assert.deepEqual(await reminderStamp(db, userId), { rows: 2, revisions: 7 });
    assert.deepEqual(await kyselyStamp(), { rows: 2, revisions: 7 });
    assert.ok(kyselyStatements.some((text) => text.startsWith('select count(*) as "rows"')));
  });
});
