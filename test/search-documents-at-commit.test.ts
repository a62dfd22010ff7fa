/**
 * On SQLite a transaction's search documents are written at its end, just before COMMIT
 * (src/db/beforeCommit.ts, src/model/searchIndex.ts): FTS5 writes its pending terms as a new
 * index segment at every statement savepoint, and SQLite opens one for each later statement
 * that may abort (the notes UPDATE with its storage trigger, the revision INSERT with its foreign
 * key). Written among the other statements, every note of a group cost a segment of its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Actor } from '../src/actor.js';
import { type OpenSqliteDatabase, openDatabase } from '../src/db/connection.js';
import { transaction } from '../src/db/transaction.js';
import type { Db } from '../src/db/types.js';
import { requireNoteAccess } from '../src/model/noteAccess.js';
import type { NoteFields } from '../src/model/noteFields.js';
import { applyNoteFields, deleteNotesForGood, insertNote } from '../src/model/noteWrites.js';
import { insertUser } from '../src/model/users.js';
import { sqliteOnly } from './helpers/postgres.js';
import { tempDataDir } from './helpers/server.js';

const ids = Array.from({ length: 6 }, (_, n) => `6f1c0c8e-3a52-4d0e-9d7e-2b6c1f0a9e1${n}`);
const WRITE_DOCUMENT = 'INSERT OR REPLACE INTO notes_fts';

describe('search documents at the end of the transaction', sqliteOnly, () => {
  let database: OpenSqliteDatabase;
  let statements: string[] = [];
  let actor: Actor;

  before(async () => {
    database = await openDatabase(tempDataDir(), { onQuery: (text) => statements.push(text) });
    const user = await insertUser(database.db, {
      email: 'search@example.com',
      display_name: 'Search',
      password_hash: 'x',
      is_owner: 1,
      created_at: 0,
    });
    actor = { userId: user.id, isOwner: true, via: 'session', scopes: new Set(['notes:write']) };
  });
  after(() => database?.close());

  const grouped = (work: (trx: Db) => Promise<unknown>) => transaction(database.db, work, { group: true });
  const create = (id: string, title: string) =>
    grouped((trx) =>
      insertNote(trx, {
        ownerId: actor.userId,
        authorId: actor.userId,
        id,
        values: { title, content: 'shared words' },
        now: 1_000,
        stampedAt: 1_000,
      }),
    );
  const edit = (id: string, values: Partial<NoteFields>) =>
    grouped(async (trx) => {
      const { note } = await requireNoteAccess(trx, actor, id, 'edit');
      await applyNoteFields(trx, note, values, { now: 2_000, stampedAt: 2_000, authorId: actor.userId });
    });
  const remove = (id: string) =>
    grouped(async (trx) => {
      const { note } = await requireNoteAccess(trx, actor, id, 'own');
      await deleteNotesForGood(trx, [note], 3_000);
    });
  /** The doc_ids whose search document matches `query`. */
  const matching = async (query: string, db: Db = database.db) =>
    (
      await sql<{
        rowid: number;
      }>`SELECT rowid FROM notes_fts WHERE notes_fts MATCH ${query} ORDER BY rowid`.execute(db)
    ).rows.map((row) => row.rowid);
  const docIdOf = async (id: string) =>
    (await sql<{ doc_id: number }>`SELECT doc_id FROM notes WHERE id = ${id}`.execute(database.db)).rows[0]
      ?.doc_id;

  it("writes a group's documents after all its other statements, just before its COMMIT", async () => {
    statements = [];
    await Promise.all(ids.map((id, n) => create(id, `first${n}`)));
    const commit = statements.indexOf('commit');
    assert.equal(statements.lastIndexOf('commit'), commit, 'the six creates shared one COMMIT');
    const documents = statements.flatMap((text, index) => (text.startsWith(WRITE_DOCUMENT) ? [index] : []));
    assert.equal(documents.length, 6);
    // Right before the COMMIT, one after the other: nothing that opens a savepoint comes between.
    assert.deepEqual(
      documents,
      [1, 2, 3, 4, 5, 6].map((n) => commit - 7 + n),
    );
    assert.ok(
      statements.slice(0, documents[0]).some((text) => text.startsWith('INSERT INTO note_revisions')),
    );
    for (const [n, id] of ids.entries()) assert.deepEqual(await matching(`first${n}`), [await docIdOf(id)]);
  });

  it('writes a note edited twice in a group once, with its last text', async () => {
    statements = [];
    await Promise.all([edit(ids[0]!, { title: 'second' }), edit(ids[0]!, { title: 'third' })]);
    assert.equal(statements.filter((text) => text === 'commit').length, 1);
    assert.equal(statements.filter((text) => text.startsWith(WRITE_DOCUMENT)).length, 1);
    assert.deepEqual(await matching('third'), [await docIdOf(ids[0]!)]);
    assert.deepEqual(await matching('second'), []);
    assert.deepEqual(await matching('first0'), []);
  });

  it('leaves no document for a note edited then deleted in one group', async () => {
    const docId = await docIdOf(ids[1]!);
    statements = [];
    await Promise.all([edit(ids[1]!, { title: 'fourth' }), remove(ids[1]!)]);
    assert.equal(statements.filter((text) => text === 'commit').length, 1);
    assert.deepEqual(await matching('fourth'), []);
    assert.ok(!(await matching('shared')).includes(docId!));
    assert.equal((await matching('shared')).length, 5);
  });

  it('writes at once in a transaction it did not open (a migration, a command)', async () => {
    statements = [];
    await database.db.transaction().execute(async (trx) => {
      await insertNote(trx, {
        ownerId: actor.userId,
        authorId: actor.userId,
        id: '6f1c0c8e-3a52-4d0e-9d7e-2b6c1f0a9e20',
        values: { title: 'alone', content: '' },
        now: 4_000,
        stampedAt: 4_000,
      });
      assert.equal((await matching('alone', trx)).length, 1, 'found before the COMMIT');
    });
  });
});
