import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { jsonListRows } from '../src/db/dialect.js';
import {
  addUser,
  clientOf,
  createUserClient,
  OWNER_PASSWORD,
  setupOwner,
  type TestClient,
} from './helpers/client.js';
import { startServer, type TestServer, useOwner, useServer } from './helpers/server.js';

const PASSWORD = 'a fine password';

describe('POST /api/users (D-AUTH-2)', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('answers 201 with a UserSummary, and the new user can sign in with their email', async () => {
    const response = await owner.post('/api/users', {
      email: 'ada@example.test',
      displayName: ' Ada Lovelace ',
      password: PASSWORD,
    });
    assert.equal(response.status, 201);
    assert.deepEqual(Object.keys(response.body).sort(), ['displayName', 'email', 'id']);
    assert.equal(response.body.email, 'ada@example.test');
    assert.equal(response.body.displayName, 'Ada Lovelace');
    assert.ok(Number.isInteger(response.body.id));
    const ada = clientOf(server);
    assert.equal(
      (await ada.post('/api/auth/login', { email: 'ada@example.test', password: PASSWORD })).status,
      200,
    );
    const status = (await ada.get('/api/auth/status')).body;
    assert.deepEqual(status.user, {
      id: response.body.id,
      email: 'ada@example.test',
      displayName: 'Ada Lovelace',
      isOwner: false,
    });
  });

  it('answers 409 email_taken for an email that exists, ignoring case', async () => {
    await owner.post('/api/users', { email: 'bob@example.test', displayName: 'Bob', password: PASSWORD });
    const response = await owner.post('/api/users', {
      email: 'BOB@Example.test',
      displayName: 'Bob again',
      password: PASSWORD,
    });
    assert.equal(response.status, 409);
    assert.equal(response.body.code, 'email_taken');
  });

  for (const [label, body] of [
    ['the password is shorter than 8 characters', { password: 'short77' }],
    ['the password is longer than 1,024 characters', { password: 'x'.repeat(1025) }],
    ['the email is not an email', { email: 'not-an-email' }],
    ['the email is empty', { email: '' }],
    ['the display name is blank', { displayName: '   ' }],
    ['the display name is missing', { displayName: undefined }],
    ['the password is missing', { password: undefined }],
  ] as const) {
    it(`answers 400 when ${label}, and creates nobody`, async () => {
      const usersBefore = (await owner.get('/api/users')).body.length;
      const response = await owner.post('/api/users', {
        email: 'carol@example.test',
        displayName: 'Carol',
        password: PASSWORD,
        ...body,
      });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'validation_failed');
      assert.equal((await owner.get('/api/users')).body.length, usersBefore);
    });
  }

  it('accepts passwords of exactly 8 and 1,024 characters', async () => {
    for (const [email, password] of [
      ['eight@example.test', '12345678'],
      ['long@example.test', 'y'.repeat(1024)],
    ]) {
      const response = await owner.post('/api/users', { email, displayName: 'Edge', password });
      assert.equal(response.status, 201, response.text);
    }
  });
});

describe('User administration is for the owner only (D-AUTH-2, D-ERR-2)', () => {
  let server: TestServer;
  let owner: TestClient;
  let ownerId: number;
  let member: { client: TestClient; userId: number };

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server, { email: 'owner@example.test' });
    ownerId = (await owner.get('/api/auth/status')).body.user.id;
    member = await createUserClient(server, 'member@example.test', PASSWORD, owner);
  });
  after(() => server.close());

  it('answers 403 to a user who is not the owner, and changes nothing', async () => {
    const attempts = [
      await member.client.post('/api/users', {
        email: 'x@example.test',
        displayName: 'X',
        password: PASSWORD,
      }),
      await member.client.get('/api/users'),
      await member.client.delete(`/api/users/${ownerId}`),
      await member.client.delete(`/api/users/${member.userId}`),
    ];
    for (const response of attempts) {
      assert.equal(response.status, 403, response.text);
      assert.equal(response.body.code, 'forbidden');
    }
    assert.equal((await owner.get('/api/users')).body.length, 2);
  });

  it('answers 401 without a session', async () => {
    const anonymous = clientOf(server);
    for (const response of [
      await anonymous.post('/api/users', { email: 'x@example.test', displayName: 'X', password: PASSWORD }),
      await anonymous.get('/api/users'),
      await anonymous.delete(`/api/users/${member.userId}`),
    ]) {
      assert.equal(response.status, 401);
      assert.equal(response.body.code, 'unauthenticated');
    }
  });

  it('GET /api/users lists every user, the owner included', async () => {
    const response = await owner.get('/api/users');
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, [
      { id: ownerId, email: 'owner@example.test', displayName: 'Owner', isOwner: true },
      { id: member.userId, email: 'member@example.test', displayName: 'member', isOwner: false },
    ]);
  });

  it('DELETE /api/users/{id} answers 400 when the owner names itself', async () => {
    const response = await owner.delete(`/api/users/${ownerId}`);
    assert.equal(response.status, 400);
    assert.equal(response.body.code, 'cannot_delete_owner');
    assert.equal((await owner.get('/api/notes')).status, 200, 'the owner is still there');
  });

  it('DELETE /api/users/{id} answers 404 user_not_found for an unknown user and 400 for a bad id', async () => {
    const unknown = await owner.delete('/api/users/999999');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'user_not_found');
    for (const id of ['abc', '0', '-1', '1.5']) {
      assert.equal((await owner.delete(`/api/users/${id}`)).status, 400, id);
    }
  });
});

describe('DELETE /api/users/{id} removes the user and everything they own (D-AUTH-2, D-SYNC-3)', () => {
  let server: TestServer;
  let owner: TestClient;
  let ownerId: number;
  let leaving: { client: TestClient; userId: number };
  let friend: { client: TestClient; userId: number };
  let ownNote: string;
  let sharedWithOwner: string;
  let ownersNote: string;

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
    ownerId = (await owner.get('/api/auth/status')).body.user.id;
    leaving = await createUserClient(server, 'leaving@example.test', PASSWORD, owner);
    friend = await createUserClient(server, 'friend@example.test', PASSWORD, owner);

    ownNote = (await leaving.client.post('/api/notes', { title: 'private #diary' })).body.id;
    sharedWithOwner = (await leaving.client.post('/api/notes', { title: 'for the team #team' })).body.id;
    await leaving.client.post(`/api/notes/${sharedWithOwner}/collaborators`, { userId: ownerId });
    await leaving.client.post(`/api/notes/${sharedWithOwner}/collaborators`, { userId: friend.userId });
    ownersNote = (await owner.post('/api/notes', { title: "owner's note" })).body.id;
    await owner.post(`/api/notes/${ownersNote}/collaborators`, { userId: leaving.userId });
    await owner.post(`/api/notes/${ownersNote}/collaborators`, { userId: friend.userId });
    // An attachment row on one of their notes: it must go with the note (files: notesDeleted).
    await server.app.db
      .insertInto('attachments')
      .values({
        id: 'att-1',
        note_id: ownNote,
        filename: 'photo.png',
        mime_type: 'image/png',
        size: 3,
        thumbnail_path: null,
        created_at: Date.now(),
        sha256: '',
      })
      .execute();

    const response = await owner.delete(`/api/users/${leaving.userId}`);
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { success: true });
  });
  after(() => server.close());

  it("ends the user's sessions: their cookie answers 401", async () => {
    const response = await leaving.client.get('/api/notes');
    assert.equal(response.status, 401);
    assert.equal(response.body.code, 'unauthenticated');
  });

  it('lets them sign in no more', async () => {
    const login = await clientOf(server).post('/api/auth/login', {
      email: 'leaving@example.test',
      password: PASSWORD,
    });
    assert.equal(login.status, 401);
  });

  it('deletes their notes with tags and attachments', async () => {
    const notes = await server.app.db
      .selectFrom('notes')
      .select('id')
      .where('owner_id', '=', leaving.userId)
      .execute();
    assert.deepEqual(notes, []);
    const attachments = await server.app.db.selectFrom('attachments').select('id').execute();
    assert.deepEqual(attachments, []);
    const tags = (await owner.get('/api/tags')).body.map((t: { name: string }) => t.name);
    assert.ok(!tags.includes('team'));
    assert.equal((await owner.get('/api/search?q=team')).body.length, 0);
  });

  it('removes their notes from the collaborators of those notes, with tombstones', async () => {
    for (const client of [owner, friend.client]) {
      assert.equal((await client.get(`/api/notes/${sharedWithOwner}`)).status, 404);
      const list = (await client.get('/api/notes')).body.map((n: { id: string }) => n.id);
      assert.ok(!list.includes(sharedWithOwner));
    }
    const tombstones = await server.app.db
      .selectFrom('note_tombstones')
      .select(['note_id', 'user_id'])
      .where('note_id', '=', sharedWithOwner)
      .orderBy('user_id')
      .execute();
    assert.deepEqual(tombstones, [
      { note_id: sharedWithOwner, user_id: ownerId },
      { note_id: sharedWithOwner, user_id: friend.userId },
    ]);
  });

  it('removes them from the notes they collaborated on, and the other collaborators stay', async () => {
    const list = (await owner.get(`/api/notes/${ownersNote}/collaborators`)).body;
    assert.deepEqual(
      list.map((c: { userId: number }) => c.userId),
      [friend.userId],
    );
    assert.equal((await owner.get(`/api/notes/${ownersNote}`)).status, 200);
  });

  it('leaves nothing of theirs behind: sessions, collaborations, tombstones, user row', async () => {
    const db = server.app.db;
    const userId = leaving.userId;
    assert.deepEqual(
      await db.selectFrom('sessions').select('user_id').where('user_id', '=', userId).execute(),
      [],
    );
    assert.deepEqual(
      await db.selectFrom('note_collaborators').select('user_id').where('user_id', '=', userId).execute(),
      [],
    );
    assert.deepEqual(
      await db.selectFrom('note_tombstones').select('user_id').where('user_id', '=', userId).execute(),
      [],
    );
    assert.equal(
      await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst(),
      undefined,
    );
    assert.equal(ownNote.length, 36);
  });

  it('frees their email for a new user', async () => {
    const again = await owner.post('/api/users', {
      email: 'leaving@example.test',
      displayName: 'Back again',
      password: PASSWORD,
    });
    assert.equal(again.status, 201);
    assert.notEqual(again.body.id, leaving.userId);
    assert.equal((await owner.delete(`/api/users/${leaving.userId}`)).status, 404);
  });
});

describe('DELETE /api/users/{id} for a user with many notes', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('removes all 12,000 of their notes (more tombstones than one SQL statement can bind)', async () => {
    const owner = await setupOwner(server);
    const { userId } = await createUserClient(server, 'prolific@example.test', PASSWORD, owner);
    // Inserted directly: 12,000 tombstones are more bound parameters than one SQLite statement takes.
    const ids = Array.from(
      { length: 12_000 },
      (_, i) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
    );
    await sql`
      INSERT INTO notes (id, owner_id, title, content, color, pinned, archived, trashed, checklist_mode,
                         sort_order, created_at, updated_at, version)
      SELECT value, ${userId}, '', '', 'default', 0, 0, 0, 0, 0, 0, 0, 1
      FROM (${jsonListRows(ids)}) AS ids`.execute(server.app.db);
    assert.equal((await owner.delete(`/api/users/${userId}`)).status, 200);
    const left = await server.app.db
      .selectFrom('notes')
      .select('id')
      .where('owner_id', '=', userId)
      .execute();
    assert.equal(left.length, 0);
  });
});

describe('GET /api/users/search (D-COLLAB-3)', () => {
  let server: TestServer;
  let owner: TestClient;
  let ownerId: number;
  let member: { client: TestClient; userId: number };
  const ids: Record<string, number> = {};

  async function add(email: string, displayName: string) {
    ids[email] = await addUser(owner, email, PASSWORD, displayName);
  }

  async function search(client: TestClient, q: string): Promise<string[]> {
    const response = await client.get(`/api/users/search?q=${encodeURIComponent(q)}`);
    assert.equal(response.status, 200, response.text);
    return response.body.map((u: { email: string }) => u.email);
  }

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server, { email: 'owner@example.test', displayName: 'Olga' });
    ownerId = (await owner.get('/api/auth/status')).body.user.id;
    member = await createUserClient(server, 'member@example.test', PASSWORD, owner);
    await add('alice.smith@example.test', 'Alice Smith');
    await add('emilie@example.test', 'Émilie Durand');
    await add('under_score@example.test', 'Under Score');
    await add('percent@example.test', '100% Sure');
  });
  after(() => server.close());

  it('matches part of the email or the display name, ignoring case, as UserSummary', async () => {
    const response = await member.client.get('/api/users/search?q=ALICE');
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, [
      { id: ids['alice.smith@example.test'], displayName: 'Alice Smith', email: 'alice.smith@example.test' },
    ]);
    assert.deepEqual(await search(member.client, 'smith@EXAMPLE'), ['alice.smith@example.test']);
    assert.deepEqual(await search(member.client, 'olg'), ['owner@example.test']);
  });

  it('ignores case outside ASCII too', async () => {
    assert.deepEqual(await search(member.client, 'émilie d'), ['emilie@example.test']);
    assert.deepEqual(await search(member.client, 'ÉMILIE'), ['emilie@example.test']);
  });

  it('leaves the caller out', async () => {
    assert.ok(!(await search(member.client, 'member')).includes('member@example.test'));
    assert.ok((await search(owner, 'member')).includes('member@example.test'));
    assert.ok(!(await search(owner, 'owner@')).includes('owner@example.test'));
    assert.notEqual(ownerId, member.userId);
  });

  it('treats % and _ as plain characters, not wildcards', async () => {
    assert.deepEqual(await search(member.client, '%'), ['percent@example.test']);
    assert.deepEqual(await search(member.client, '_'), ['under_score@example.test']);
    assert.deepEqual(await search(member.client, 'r_s'), ['under_score@example.test']);
    assert.deepEqual(await search(member.client, '\\'), []);
  });

  it('answers at most 20 users', async () => {
    // Inserted directly: hashing 21 passwords through the API would only slow the suite down.
    await server.app.db
      .insertInto('users')
      .values(
        Array.from({ length: 21 }, (_, i) => ({
          email: `crowd${i}@example.test`,
          display_name: `Crowd ${i}`,
          password_hash: 'unused',
          is_owner: 0,
          created_at: 0,
        })),
      )
      .execute();
    const found = await search(member.client, 'crowd');
    assert.equal(found.length, 20);
  });

  it('answers 400 when q is missing or blank', async () => {
    for (const path of ['/api/users/search', '/api/users/search?q=', '/api/users/search?q=%20%20']) {
      const response = await member.client.get(path);
      assert.equal(response.status, 400, path);
      assert.equal(response.body.code, 'validation_failed');
    }
  });

  it('answers 401 without a session', async () => {
    assert.equal((await clientOf(server).get('/api/users/search?q=a')).status, 401);
  });
});

describe('createUserClient (test helper)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('sets up the owner itself when no owner exists yet, and reuses it', async () => {
    const first = await createUserClient(server, 'first@example.test');
    const second = await createUserClient(server, 'second@example.test');
    assert.notEqual(first.userId, second.userId);
    assert.equal((await first.client.get('/api/auth/status')).body.user.email, 'first@example.test');
  });
});

describe('TestClient (test helper): an injected request answers as the socket does', () => {
  const server = useServer();
  const owner = useOwner(server);

  /** What a test can read of a response; the headers only a socket sets are left out. */
  const seen = ({ status, headers, body, text }: Awaited<ReturnType<TestClient['get']>>) => ({
    status,
    headers: [...headers].filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name)),
    body,
    text,
  });

  it('gives the same status, headers and body for the same requests', async () => {
    assert.ok(owner.app, 'useOwner() injects');
    const overSocket = clientOf(server.url);
    for (const [name, value] of owner.cookies) overSocket.cookies.set(name, value);
    const noteId = (await owner.post('/api/notes', { title: 'both see it', content: 'é #tag' })).body.id;
    const requests: [string, string, { json?: unknown; body?: string; headers?: Record<string, string> }?][] =
      [
        ['GET', '/api/auth/status'],
        ['GET', `/api/notes/${noteId}`],
        ['GET', '/api/notes?tag=tag'],
        ['GET', '/api/nope'],
        ['PUT', `/api/notes/${noteId}`, { json: {} }],
        [
          'PATCH',
          `/api/notes/${noteId}`,
          { body: '{"title":', headers: { 'content-type': 'application/json' } },
        ],
        ['PATCH', `/api/notes/${noteId}`, { json: { title: 'x' }, headers: { 'if-match': '"999"' } }],
        ['GET', `/api/notes/${noteId}/../${noteId}`],
        // A same-origin write: the Origin check compares it with the Host the client sent.
        ['DELETE', `/api/notes/${randomUUID()}`, { headers: { origin: server.url } }],
      ];
    for (const [method, path, options] of requests) {
      assert.deepEqual(
        seen(await owner.request(method, path, options)),
        seen(await overSocket.request(method, path, options)),
        `${method} ${path}`,
      );
    }
  });

  it('keeps and drops cookies from injected answers like a browser', async () => {
    const client = clientOf(server);
    const login = await client.post('/api/auth/login', { password: OWNER_PASSWORD });
    assert.equal(login.status, 200);
    assert.ok(client.cookies.has('session'));
    assert.equal((await client.get('/api/auth/status')).body.user.isOwner, true);
    assert.equal((await client.post('/api/auth/logout')).status, 200);
    assert.equal(client.cookies.has('session'), false);
  });
});
