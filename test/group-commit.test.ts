import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type OpenSqliteDatabase, openDatabase } from '../src/db/connection.js';
import type { WriteWork } from '../src/db/groupCommit.js';
import { transaction } from '../src/db/transaction.js';
import { tempDataDir, useOwner, useServer } from './helpers/server.js';

/**
 * Group commit (docs/decisions/0025-group-commit.md): writes that reach SQLite within two turns
 * share one transaction and are answered after its COMMIT; a failed write is answered as if alone.
 */
describe('group commit on SQLite', { skip: process.env.TEST_DATABASE_URL ? 'SQLite only' : false }, () => {
  let database: OpenSqliteDatabase;
  const statements: string[] = [];

  before(async () => {
    database = await openDatabase(tempDataDir(), { onQuery: (text) => statements.push(text.toLowerCase()) });
    await sql`CREATE TABLE grouped (n INTEGER PRIMARY KEY, note_id TEXT REFERENCES notes (id))`.execute(
      database.db,
    );
  });
  after(() => database?.close());

  const grouped = <T>(work: WriteWork<T>) => transaction(database.db, work, { group: true });
  const insert = (n: number, noteId: string | null = null) =>
    grouped((trx) => sql`INSERT INTO grouped (n, note_id) VALUES (${n}, ${noteId})`.execute(trx));
  const stored = async () =>
    (await sql<{ n: number }>`SELECT n FROM grouped ORDER BY n`.execute(database.db)).rows.map(
      (row) => row.n,
    );
  const commits = () => statements.filter((text) => text === 'commit').length;

  it('commits writes that arrive together once, and answers each only after that COMMIT', async () => {
    const commitsBefore = commits();
    const answeredAfter: number[] = [];
    await Promise.all(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => insert(n).then(() => answeredAfter.push(commits()))),
    );
    assert.deepEqual(await stored(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.equal(commits() - commitsBefore, 1, 'one COMMIT for the ten writes');
    assert.ok(answeredAfter.every((count) => count === commitsBefore + 1));
  });

  it('a write asked for in the next turn of the event loop (a request read meanwhile) joins the group', async () => {
    await sql`DELETE FROM grouped`.execute(database.db);
    const commitsBefore = commits();
    const first = insert(11);
    const next = new Promise<unknown>((resolve) => setImmediate(() => resolve(insert(12))));
    await Promise.all([first, next]);
    assert.deepEqual(await stored(), [11, 12]);
    assert.equal(commits() - commitsBefore, 1, 'one COMMIT for both writes');
  });

  it('answers a failed write as if alone: its writes are not stored, the others of its group are', async () => {
    await sql`DELETE FROM grouped`.execute(database.db);
    const failure = new Error('refused after writing');
    const answers = await Promise.allSettled([
      insert(1),
      grouped(async (trx) => {
        await sql`INSERT INTO grouped (n) VALUES (2)`.execute(trx);
        throw failure;
      }),
      insert(3),
      insert(1), // the primary key: fails in SQLite, after the first insert of 1 in the same group
    ]);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      ['fulfilled', 'rejected', 'fulfilled', 'rejected'],
    );
    assert.equal((answers[1] as PromiseRejectedResult).reason, failure);
    assert.deepEqual(await stored(), [1, 3]);
  });

  it('regroups around a failed write: the writes before it commit together, and those after it', async () => {
    await sql`DELETE FROM grouped`.execute(database.db);
    const commitsBefore = commits();
    const answers = await Promise.allSettled([
      insert(1),
      insert(2),
      grouped(() => Promise.reject(new Error('refused'))),
      insert(4),
      insert(5),
    ]);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    assert.deepEqual(await stored(), [1, 2, 4, 5]);
    assert.equal(commits() - commitsBefore, 2, 'one COMMIT for 1 and 2, one for 4 and 5');
  });

  it('fails every write of a group whose COMMIT fails, and stores none of them', async () => {
    await sql`DELETE FROM grouped`.execute(database.db);
    const answers = await Promise.allSettled([
      insert(1),
      grouped(async (trx) => {
        // A deferred foreign key is checked at COMMIT, which then fails.
        await sql`PRAGMA defer_foreign_keys = ON`.execute(trx);
        await sql`INSERT INTO grouped (n, note_id) VALUES (2, ${randomUUID()})`.execute(trx);
      }),
      insert(3),
    ]);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      ['rejected', 'rejected', 'rejected'],
    );
    assert.deepEqual(await stored(), []);
    // The queue goes on: the next write commits.
    await insert(4);
    assert.deepEqual(await stored(), [4]);
  });

  it('runs a write that arrives alone in a transaction of its own, as before', async () => {
    const from = statements.length;
    await insert(5);
    assert.deepEqual(statements.slice(from), [
      'begin',
      'insert into grouped (n, note_id) values (?, ?)',
      'commit',
    ]);
  });
});

describe('creates and updates arriving together over HTTP', () => {
  const statements: string[] = [];
  const server = useServer({ onQuery: (text) => statements.push(text.toLowerCase()) });
  const owner = useOwner(server);

  it('are each answered as alone, a duplicate id refused without failing the others', async () => {
    const taken = (await owner.post('/api/notes', { title: 'first' })).body.id as string;
    const from = statements.length;
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => owner.post('/api/notes', { title: `note ${i}` })),
      owner.post('/api/notes', { id: taken, title: 'the same id' }),
      owner.patch(`/api/notes/${taken}`, { content: 'edited' }),
    ]);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [201, 201, 201, 201, 201, 201, 201, 201, 409, 200],
    );
    const notes = (await owner.get('/api/notes')).body as { title: string; content: string }[];
    assert.equal(notes.length, 9);
    assert.equal(notes.find((note) => note.title === 'first')?.content, 'edited');
    if (!process.env.TEST_DATABASE_URL) {
      const commits = statements.slice(from).filter((text) => text === 'commit').length;
      assert.ok(commits < 9, `${commits} COMMITs for the 9 writes stored`);
    }
  });
});
