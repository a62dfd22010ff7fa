/**
 * Rows read on nearly every request are kept between requests while their tables are unchanged
 * (src/db/keptReads.ts, keptWhileTablesUnchanged; decision 0048): the session's and the API
 * key's user, a note's reminder and its attachments, kept through note writes. From the
 * attacker's side: a credential ended in any way is refused on its very next request when this
 * server ends it, and within OTHER_CONNECTIONS_MS when a command beside the server does. A
 * reminder or attachment changed shows in the note's next answer. A note read by id again runs
 * no statement, and shows a change to the note or its collaborators on the next read.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import sharp from 'sharp';
import { type OpenSqliteDatabase, openDatabase } from '../src/db/connection.js';
import { keptWhileTablesUnchanged, OTHER_CONNECTIONS_MS } from '../src/db/keptReads.js';
import { transaction } from '../src/db/transaction.js';
import type { Db } from '../src/db/types.js';
import { createApiKey, createUserClient, setupOwner, signIn, type TestClient } from './helpers/client.js';
import { sqliteOnly } from './helpers/postgres.js';
import { ManualClock, startServer, tempDataDir, useOwner, useServer } from './helpers/server.js';
import { uploadImage } from './helpers/uploads.js';

const isSessionRead = (sql: string) => /from "?sessions"?/i.test(sql);
const isKeyRead = (sql: string) => /from "?api_keys"?/i.test(sql);

/** A client sending only the Bearer key, no cookie. */
const withKey = (client: TestClient, key: string) => ({
  get: (url: string) =>
    client.request('GET', url, { headers: { cookie: '', authorization: `Bearer ${key}` } }),
});

describe('kept credentials and reads by id', () => {
  let queries: string[] = [];
  const server = useServer({ onQuery: (sql) => queries.push(sql) });
  const owner = useOwner(server);
  let users = 0;
  const newUser = () => createUserClient(server, `kept${++users}@example.com`, 'kept secret');
  /** Runs one statement on a connection of its own, as a command beside the server would. */
  const onAnotherConnection = (statement: string, ...params: unknown[]) => {
    const elsewhere = new SQLite(path.join(server.dataDir, 'notes.db'));
    try {
      elsewhere.prepare(statement).run(...params);
    } finally {
      elsewhere.close();
    }
  };

  it(
    'reads a session once while sessions and users are unchanged, through note writes',
    sqliteOnly,
    async () => {
      const { client } = await newUser();
      await client.get('/api/notes');
      queries = [];
      const note = await client.post('/api/notes', { title: 'written' });
      await client.patch(`/api/notes/${note.body.id}`, { title: 'written again' });
      assert.equal((await client.get('/api/notes')).status, 200);
      assert.deepEqual(queries.filter(isSessionRead), [], 'no session read');

      await owner.post('/api/users', {
        email: `kept${++users}@example.com`,
        displayName: 'x',
        password: 'kept secret',
      });
      queries = [];
      assert.equal((await client.get('/api/notes')).status, 200);
      assert.equal(queries.filter(isSessionRead).length, 1, 'read again after a user was added');
    },
  );

  it('reads an API key once while keys and users are unchanged', sqliteOnly, async () => {
    const { client } = await newUser();
    const { key } = await createApiKey(client);
    const agent = withKey(client, key);
    // The first use records last_used_at, a change to api_keys: the second reads it again.
    for (const _ of [1, 2]) assert.equal((await agent.get('/api/notes')).status, 200);
    queries = [];
    assert.equal((await agent.get('/api/notes')).status, 200);
    assert.deepEqual(queries.filter(isKeyRead), [], 'no key read');
  });

  it('refuses a session signed out, at once', async () => {
    const { client } = await newUser();
    const cookie = client.cookies.get('session')!;
    assert.equal((await client.get('/api/notes')).status, 200);
    assert.equal((await client.post('/api/auth/logout')).status, 200);
    const replayed = await client.request('GET', '/api/notes', { headers: { cookie: `session=${cookie}` } });
    assert.equal(replayed.status, 401);
  });

  it("refuses a user's sessions and keys once the owner removes the user (a cascade)", async () => {
    const { client, userId } = await newUser();
    const { key } = await createApiKey(client);
    assert.equal((await client.get('/api/notes')).status, 200);
    assert.equal((await withKey(client, key).get('/api/notes')).status, 200);
    assert.equal((await owner.delete(`/api/users/${userId}`)).status, 200);
    assert.equal((await client.get('/api/notes')).status, 401, 'the session');
    assert.equal((await withKey(client, key).get('/api/notes')).status, 401, 'the key');
  });

  it('refuses the other sessions once the password changes, and a revoked key', async () => {
    const { client } = await newUser();
    const elsewhere = await signIn(server, `kept${users}@example.com`, 'kept secret');
    const { id, key } = await createApiKey(client);
    assert.equal((await elsewhere.get('/api/notes')).status, 200);
    assert.equal((await withKey(client, key).get('/api/notes')).status, 200);
    const changed = await client.post('/api/auth/password', {
      currentPassword: 'kept secret',
      newPassword: 'another kept secret',
    });
    assert.equal(changed.status, 200);
    assert.equal((await elsewhere.get('/api/notes')).status, 401, 'the other session');
    assert.equal((await client.get('/api/notes')).status, 200, 'the session that changed it');
    assert.equal((await client.delete(`/api/settings/api-keys/${id}`)).status, 200);
    assert.equal((await withKey(client, key).get('/api/notes')).status, 401, 'the revoked key');
  });

  it("shows a note's reminder as soon as it is set, changed or removed", async () => {
    const note = (await owner.post('/api/notes', { title: 'remind me' })).body;
    const reminderOf = async () => (await owner.get(`/api/notes/${note.id}`)).body.reminder;
    assert.equal(await reminderOf(), null);
    await owner.patch(`/api/notes/${note.id}`, { reminder: { at: '2031-01-01T09:00:00Z' } });
    assert.equal((await reminderOf())?.at, '2031-01-01T09:00:00.000Z');
    const retitled = await owner.patch(`/api/notes/${note.id}`, { title: 'remind me, retitled' });
    assert.equal(retitled.body.reminder?.at, '2031-01-01T09:00:00.000Z', 'kept through a note write');
    await owner.patch(`/api/notes/${note.id}`, { reminder: { at: '2032-02-02T09:00:00Z' } });
    assert.equal((await reminderOf())?.at, '2032-02-02T09:00:00.000Z');
    await owner.patch(`/api/notes/${note.id}`, { reminder: null });
    assert.equal(await reminderOf(), null);
  });

  it("shows a note's attachments as soon as one is added or removed", async () => {
    const note = (await owner.post('/api/notes', { title: 'with a photo' })).body;
    const attachmentsOf = async () =>
      (await owner.get(`/api/notes/${note.id}`)).body.attachments as { id: string }[];
    assert.deepEqual(await attachmentsOf(), []);
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#c00' } })
      .png()
      .toBuffer();
    const uploaded = await uploadImage(owner, note.id, png);
    assert.equal(uploaded.status, 201, uploaded.text);
    assert.deepEqual(
      (await attachmentsOf()).map((a) => a.id),
      [uploaded.body.id],
    );
    const retitled = await owner.patch(`/api/notes/${note.id}`, { title: 'with a photo, retitled' });
    assert.equal(retitled.body.attachments.length, 1, 'kept through a note write');
    const removed = await owner.delete(`/api/notes/${note.id}/attachments?attachmentId=${uploaded.body.id}`);
    assert.equal(removed.status, 200);
    assert.deepEqual(await attachmentsOf(), []);
    const again = await owner.patch(`/api/notes/${note.id}`, { title: 'without a photo' });
    assert.deepEqual(again.body.attachments, []);
  });

  it('refuses a kept session once it has expired, without renewing it (D-AUTH-4)', async () => {
    const clock = new ManualClock();
    const alone = await startServer({ clock });
    try {
      const client = await setupOwner(alone);
      assert.equal((await client.get('/api/notes')).status, 200);
      clock.advance(31 * 86_400_000);
      assert.equal((await client.get('/api/notes')).status, 401);
    } finally {
      await alone.close();
    }
  });

  it('refuses a session another connection ended, within OTHER_CONNECTIONS_MS', sqliteOnly, async () => {
    const { client, userId } = await newUser();
    assert.equal((await client.get('/api/notes')).status, 200);
    onAnotherConnection('DELETE FROM sessions WHERE user_id = ?', userId);
    await sleep(OTHER_CONNECTIONS_MS);
    assert.equal((await client.get('/api/notes')).status, 401);
  });

  // One collaborator for the reads by id: each new user signs in, and sign-ins are rate limited.
  let collaborator: Awaited<ReturnType<typeof newUser>> | undefined;
  /** A new note of the owner's that the collaborator may read, read once by each. */
  const sharedNote = async () => {
    collaborator ??= await newUser();
    const reader = collaborator;
    const note = (await owner.post('/api/notes', { title: 'shared' })).body;
    const added = await owner.post(`/api/notes/${note.id}/collaborators`, { userId: reader.userId });
    assert.equal(added.status, 201);
    assert.equal((await reader.client.get(`/api/notes/${note.id}`)).status, 200);
    assert.equal((await owner.get(`/api/notes/${note.id}`)).status, 200);
    return { note, reader: reader.client, readerId: reader.userId };
  };

  it(
    'runs no statement for a note read again while notes and collaborations are unchanged',
    sqliteOnly,
    async () => {
      const { note, reader } = await sharedNote();
      queries = [];
      const again = await reader.get(`/api/notes/${note.id}`);
      assert.equal(again.status, 200);
      assert.equal(again.body.title, 'shared');
      assert.deepEqual(queries, [], 'no statement');
    },
  );

  it("refuses a collaborator's next read once the owner removes her, or deletes the note", async () => {
    const { note, reader, readerId } = await sharedNote();
    const removed = await owner.delete(`/api/notes/${note.id}/collaborators?userId=${readerId}`);
    assert.equal(removed.status, 200);
    assert.equal((await reader.get(`/api/notes/${note.id}`)).status, 404, 'removed');

    const other = await sharedNote();
    assert.equal((await owner.delete(`/api/notes/${other.note.id}`)).status, 200);
    assert.equal((await other.reader.get(`/api/notes/${other.note.id}`)).status, 404, 'deleted');
    assert.equal((await owner.get(`/api/notes/${other.note.id}`)).status, 404, "deleted, the owner's");
  });

  it("shows the owner's edit in a collaborator's next read", async () => {
    const { note, reader } = await sharedNote();
    const edited = await owner.patch(`/api/notes/${note.id}`, { title: 'shared, edited' });
    const read = await reader.get(`/api/notes/${note.id}`);
    assert.equal(read.body.title, 'shared, edited');
    assert.equal(read.headers.get('etag'), `"${edited.body.version}"`);
  });

  it('shows an edit another connection committed, within OTHER_CONNECTIONS_MS', sqliteOnly, async () => {
    const { note, reader } = await sharedNote();
    onAnotherConnection("UPDATE notes SET color = 'teal', version = version + 1 WHERE id = ?", note.id);
    await sleep(OTHER_CONNECTIONS_MS);
    assert.equal((await reader.get(`/api/notes/${note.id}`)).body.color, 'teal');
  });
});

/** A fresh database whose table `table` holds k 'a' = 'before', a keeper of its rows, a read of 'a'. */
async function withKeptTable(
  table: string,
  test: (kept: {
    db: Db;
    keeper: ReturnType<typeof keptWhileTablesUnchanged<{ v: string }>>;
    read: () => { v: string } | undefined;
  }) => Promise<void>,
) {
  const database: OpenSqliteDatabase = await openDatabase(tempDataDir());
  try {
    database.sqlite.exec(
      `CREATE TABLE ${table} (k TEXT PRIMARY KEY, v TEXT); INSERT INTO ${table} VALUES ('a', 'before')`,
    );
    const keeper = keptWhileTablesUnchanged<{ v: string }>({
      name: `${table}_rows`,
      tables: [table],
      max: 10,
    });
    const read = () =>
      database.sqlite.prepare<[], { v: string }>(`SELECT v FROM ${table} WHERE k = 'a'`).get();
    await test({ db: database.db, keeper, read });
  } finally {
    await database.close();
  }
}

/** Runs `work` in a group commit's transaction that then fails, so that it is rolled back. */
async function rolledBack(db: Db, work: (trx: Db) => Promise<void>) {
  const refused = new Error('refused after the work');
  const written = transaction(
    db,
    async (trx) => {
      await work(trx);
      throw refused;
    },
    { group: true },
  );
  await assert.rejects(written, refused);
}

describe('a keeper of rows, inside a transaction', sqliteOnly, () => {
  it('does not keep what a write later rolled back showed', async () => {
    await withKeptTable('kept_test', async ({ db, keeper, read }) => {
      assert.equal(keeper(db, 'a', read)?.v, 'before');
      await rolledBack(db, async (trx) => {
        await sql`UPDATE kept_test SET v = 'rolled back' WHERE k = 'a'`.execute(trx);
        assert.equal(keeper(trx, 'a', read)?.v, 'rolled back', 'the transaction sees its write');
      });
      assert.equal(keeper(db, 'a', read)?.v, 'before');
    });
  });

  it('still hears changes when first asked inside a transaction that rolled back', async () => {
    await withKeptTable('kept_first', async ({ db, keeper, read }) => {
      await rolledBack(db, async (trx) => {
        assert.equal(keeper(trx, 'a', read)?.v, 'before');
      });
      assert.equal(keeper(db, 'a', read)?.v, 'before');
      await sql`UPDATE kept_first SET v = 'after' WHERE k = 'a'`.execute(db);
      assert.equal(keeper(db, 'a', read)?.v, 'after', 'the change is heard');
    });
  });
});
