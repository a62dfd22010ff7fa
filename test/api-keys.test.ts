import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { ManualClock, startServer, type TestServer, useOwner, useServer } from './helpers/server.js';

/** A request carrying only the API key: the client's cookie is left out. */
const withKey = (client: TestClient, key: string, method: string, path: string, json?: unknown) =>
  client.request(method, path, { json, headers: { cookie: '', authorization: `Bearer ${key}` } });

async function createKey(client: TestClient, body: Record<string, unknown> = { name: 'agent' }) {
  const response = await client.post('/api/settings/api-keys', body);
  assert.equal(response.status, 201, response.text);
  return response.body as { id: string; key: string; name: string; keyPrefix: string; scopes: string[] };
}

describe('POST /api/settings/api-keys', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('answers 201 with nsk_ + 32 random bytes in base64url, its 12-character prefix and both scopes (D-KEY-1, D-KEY-3)', async () => {
    const created = await createKey(owner, { name: '  Claude Desktop  ' });
    assert.match(created.key, /^nsk_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(created.key.slice(4), 'base64url').length, 32);
    assert.equal(created.keyPrefix, created.key.slice(0, 12));
    assert.equal(created.name, 'Claude Desktop');
    assert.deepEqual(created.scopes, ['notes:read', 'notes:write']);
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    const other = await createKey(owner);
    assert.notEqual(other.key, created.key);
  });

  it('stores only the SHA-256 of the key (D-KEY-1)', async () => {
    const created = await createKey(owner);
    const row = await server.app.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.key_hash, createHash('sha256').update(created.key).digest('hex'));
    assert.ok(!Object.values(row).some((value) => String(value).includes(created.key.slice(12))));
  });

  it('requires a name of 1 to 100 characters after trimming (D-KEY-1)', async () => {
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, { name: 42 }]) {
      const response = await owner.post('/api/settings/api-keys', body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.code, 'validation_failed');
    }
    assert.equal((await createKey(owner, { name: ` ${'x'.repeat(100)} ` })).name.length, 100);
  });

  it('takes scopes notes:read and notes:write; notes:write includes reading (D-KEY-3)', async () => {
    assert.deepEqual((await createKey(owner, { name: 'r', scopes: ['notes:read'] })).scopes, ['notes:read']);
    assert.deepEqual((await createKey(owner, { name: 'w', scopes: ['notes:write'] })).scopes, [
      'notes:read',
      'notes:write',
    ]);
    for (const scopes of [[], ['notes:admin'], 'notes:read']) {
      const response = await owner.post('/api/settings/api-keys', { name: 'bad', scopes });
      assert.equal(response.status, 400, JSON.stringify(scopes));
    }
  });

  it('answers 401 without a session, and to a Bearer key: keys cannot mint keys (D-KEY-2)', async () => {
    const { key } = await createKey(owner);
    const anonymous = await owner.request('POST', '/api/settings/api-keys', {
      json: { name: 'x' },
      headers: { cookie: '' },
    });
    assert.equal(anonymous.status, 401);
    const keyOnly = await withKey(owner, key, 'POST', '/api/settings/api-keys', { name: 'x' });
    assert.equal(keyOnly.status, 401);
    assert.equal(keyOnly.body.code, 'unauthenticated');
  });
});

describe('GET /api/settings/api-keys', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1));
  const server = useServer({ clock });
  const owner = useOwner(server);

  it("lists the caller's keys with scopes, never the key or its hash", async () => {
    const created = await createKey(owner, { name: 'reader', scopes: ['notes:read'] });
    const { client: other } = await createUserClient(server, 'other@example.com');
    await createKey(other, { name: 'not mine' });
    const response = await owner.get('/api/settings/api-keys');
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, [
      {
        id: created.id,
        name: 'reader',
        keyPrefix: created.keyPrefix,
        scopes: ['notes:read'],
        createdAt: new Date(clock.current).toISOString(),
        lastUsedAt: null,
      },
    ]);
    assert.ok(!response.text.includes(created.key));
  });

  it('sets lastUsedAt on first use and writes it at most once a minute (D-KEY-1)', async () => {
    const { id, key } = await createKey(owner, { name: 'used' });
    const lastUsed = async () =>
      ((await owner.get('/api/settings/api-keys')).body as { id: string; lastUsedAt: string | null }[]).find(
        (k) => k.id === id,
      )!.lastUsedAt;
    assert.equal(await lastUsed(), null);
    const firstUse = clock.current;
    assert.equal((await withKey(owner, key, 'GET', '/api/notes')).status, 200);
    assert.equal(await lastUsed(), new Date(firstUse).toISOString());
    clock.advance(59_000);
    await withKey(owner, key, 'GET', '/api/notes');
    assert.equal(await lastUsed(), new Date(firstUse).toISOString());
    clock.advance(1_000);
    await withKey(owner, key, 'GET', '/api/notes');
    assert.equal(await lastUsed(), new Date(clock.current).toISOString());
  });
});

describe('DELETE /api/settings/api-keys/:id', () => {
  let server: TestServer;
  let owner: TestClient;
  let other: TestClient;
  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
    ({ client: other } = await createUserClient(server, 'mallory@example.com'));
  });
  after(() => server.close());

  it('revokes a key: its next request answers 401 with WWW-Authenticate: Bearer (D-KEY-2)', async () => {
    const { id, key } = await createKey(owner);
    const before = await withKey(other, key, 'GET', '/api/notes');
    assert.equal(before.status, 200);
    const response = await owner.delete(`/api/settings/api-keys/${id}`);
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { success: true });
    const after = await withKey(other, key, 'GET', '/api/notes');
    assert.equal(after.status, 401);
    assert.equal(after.headers.get('www-authenticate'), 'Bearer');
    assert.equal((await owner.get('/api/settings/api-keys')).body.length, 0);
  });

  it("answers 404 to another user's session for my key, which keeps working (D-KEY-2)", async () => {
    const { id, key } = await createKey(owner);
    const response = await other.delete(`/api/settings/api-keys/${id}`);
    assert.equal(response.status, 404);
    assert.equal(response.body.code, 'api_key_not_found');
    const still = await withKey(other, key, 'GET', '/api/notes');
    assert.equal(still.status, 200);
  });

  it("answers 401 to another user's key: a key cannot revoke keys (D-KEY-2)", async () => {
    const mine = await createKey(owner);
    const theirs = await createKey(other);
    const response = await withKey(other, theirs.key, 'DELETE', `/api/settings/api-keys/${mine.id}`);
    assert.equal(response.status, 401);
    const own = await withKey(other, theirs.key, 'DELETE', `/api/settings/api-keys/${theirs.id}`);
    assert.equal(own.status, 401);
    assert.ok((await owner.get('/api/settings/api-keys')).body.some((k: { id: string }) => k.id === mine.id));
  });

  it('answers 404 for an unknown id, whatever it looks like', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-key']) {
      const response = await owner.delete(`/api/settings/api-keys/${id}`);
      assert.equal(response.status, 404);
      assert.equal(response.body.code, 'api_key_not_found');
    }
  });
});

describe('Bearer API keys on REST endpoints (D-KEY-2, D-KEY-3)', () => {
  let server: TestServer;
  let owner: TestClient;
  let readWrite: string;
  let readOnly: string;
  let noteId: string;

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
    readWrite = (await createKey(owner)).key;
    readOnly = (await createKey(owner, { name: 'reader', scopes: ['notes:read'] })).key;
    noteId = (await owner.post('/api/notes', { title: 'Groceries', content: 'milk #shop' })).body.id;
  });
  after(() => server.close());

  it('acts as its user on the notes endpoints', async () => {
    const created = await withKey(owner, readWrite, 'POST', '/api/notes', { title: 'From an agent' });
    assert.equal(created.status, 201);
    const seen = await owner.get(`/api/notes/${created.body.id}`);
    assert.equal(seen.status, 200);
    assert.equal(seen.body.ownerId, created.body.ownerId);
    const patched = await withKey(owner, readWrite, 'PATCH', `/api/notes/${created.body.id}`, {
      pinned: true,
    });
    assert.equal(patched.status, 200);
    assert.equal((await withKey(owner, readWrite, 'DELETE', `/api/notes/${created.body.id}`)).status, 200);
  });

  it('answers GET /api/users/me with the key’s user, as a session does (D-KEY-2)', async () => {
    const bySession = await owner.get('/api/users/me');
    assert.equal(bySession.status, 200);
    assert.deepEqual(bySession.body, { id: 1, email: '', displayName: 'Owner', isOwner: true });
    for (const key of [readWrite, readOnly]) {
      const byKey = await withKey(owner, key, 'GET', '/api/users/me');
      assert.equal(byKey.status, 200);
      assert.deepEqual(byKey.body, bySession.body);
    }
    const { client: member, userId } = await createUserClient(server, 'member@example.com', undefined, owner);
    const memberKey = (await createKey(member)).key;
    const asMember = await withKey(member, memberKey, 'GET', '/api/users/me');
    assert.deepEqual(asMember.body, {
      id: userId,
      email: 'member@example.com',
      displayName: 'member',
      isOwner: false,
    });
    const anonymous = await owner.request('GET', '/api/users/me', { headers: { cookie: '' } });
    assert.equal(anonymous.status, 401);
  });

  it('answers 401 with WWW-Authenticate: Bearer for a malformed or unknown key', async () => {
    const unknown = `nsk_${'A'.repeat(43)}`;
    for (const header of [`Bearer ${unknown}`, 'Bearer nsk_short', 'Bearer ', `Bearer ${readWrite}x`]) {
      const response = await owner.request('GET', '/api/notes', {
        headers: { cookie: '', authorization: header },
      });
      assert.equal(response.status, 401, header);
      assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      assert.equal(response.body.code, 'unauthenticated');
    }
  });

  it('is refused on /api/auth/*, /api/settings/api-keys and account endpoints, which need the session', async () => {
    for (const [method, path, body] of [
      ['POST', '/api/auth/logout', undefined],
      ['POST', '/api/auth/password', { currentPassword: 'x'.repeat(8), newPassword: 'y'.repeat(8) }],
      ['GET', '/api/settings/api-keys', undefined],
      ['POST', '/api/settings/api-keys', { name: 'minted' }],
      ['PATCH', '/api/users/me', { displayName: 'Hijacked' }],
    ] as const) {
      const response = await withKey(owner, readWrite, method, path, body);
      assert.equal(response.status, 401, `${method} ${path}`);
    }
    const status = await withKey(owner, readWrite, 'GET', '/api/auth/status');
    assert.equal(status.body.authenticated, false);
  });

  it('lets a read-only key list, get and search (D-KEY-3)', async () => {
    assert.equal((await withKey(owner, readOnly, 'GET', '/api/notes')).status, 200);
    assert.equal((await withKey(owner, readOnly, 'GET', `/api/notes/${noteId}`)).body.title, 'Groceries');
    const found = await withKey(owner, readOnly, 'GET', '/api/search?q=milk');
    assert.deepEqual(
      found.body.map((n: { id: string }) => n.id),
      [noteId],
    );
    assert.deepEqual(
      (await withKey(owner, readOnly, 'GET', '/api/tags')).body.map((t: { name: string }) => t.name),
      ['shop'],
    );
  });

  it('answers 403 insufficient_scope to every write by a read-only key, changing nothing (D-KEY-3)', async () => {
    const before = (await owner.get(`/api/notes/${noteId}`)).body;
    for (const [method, path, body] of [
      ['POST', '/api/notes', { title: 'nope' }],
      ['PATCH', `/api/notes/${noteId}`, { title: 'nope' }],
      ['DELETE', `/api/notes/${noteId}`, undefined],
    ] as const) {
      const response = await withKey(owner, readOnly, method, path, body);
      assert.equal(response.status, 403, `${method} ${path}`);
      assert.equal(response.body.code, 'insufficient_scope');
    }
    assert.deepEqual((await owner.get(`/api/notes/${noteId}`)).body, before);
    assert.equal((await owner.get('/api/notes')).body.length, 1);
  });
});
