import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createPasswordHasher } from '../src/features/users/passwords.js';
import { replacePasswordHash } from '../src/model/users.js';
import { clientOf, createUserClient, OWNER_PASSWORD, setupOwner, type TestClient } from './helpers/client.js';
import {
  ManualClock,
  startLoggedServer,
  startServer,
  type TestServer,
  tempDataDir,
  useOwner,
  useServer,
} from './helpers/server.js';

const DAY = 86_400_000;

function sessionCookie(response: { headers: Headers }): string | undefined {
  return response.headers.getSetCookie().find((c) => c.startsWith('session='));
}

describe('POST /api/auth/setup', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('refuses a password shorter than 8 characters or longer than 1,024 (D-AUTH-7)', async () => {
    const client = clientOf(server);
    for (const password of ['short', 'x'.repeat(1025)]) {
      const response = await client.post('/api/auth/setup', { password });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'validation_failed');
      assert.equal(response.body.details[0].path, '/password');
    }
    assert.equal((await client.get('/api/auth/status')).body.setupRequired, true);
  });

  it('creates the owner with optional email and displayName and signs in (D-AUTH-1)', async () => {
    const client = clientOf(server);
    const response = await client.post('/api/auth/setup', {
      password: OWNER_PASSWORD,
      email: 'Owner@Example.com',
      displayName: 'Ada',
    });
    assert.equal(response.status, 201);
    assert.deepEqual(response.body, { success: true });
    const cookie = sessionCookie(response)!;
    assert.match(cookie, /^session=[A-Za-z0-9_-]{43};/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, /Path=\//);
    assert.match(cookie, /Max-Age=2592000/);
    assert.doesNotMatch(cookie, /Secure/);
    const status = await client.get('/api/auth/status');
    assert.deepEqual(status.body, {
      setupRequired: false,
      authenticated: true,
      user: { id: 1, email: 'Owner@Example.com', displayName: 'Ada', isOwner: true },
      passwordLogin: true,
      singleSignOn: null,
    });
  });

  it('answers 400 once setup has been completed (docs/interface.md#authentication-rule-3)', async () => {
    const response = await clientOf(server).post('/api/auth/setup', {
      password: 'another password',
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.code, 'setup_completed');
  });

  it('stores only a hash of the session token (D-AUTH-4)', async () => {
    const client = await clientOf(server);
    const login = await client.post('/api/auth/login', { password: OWNER_PASSWORD });
    const token = client.cookies.get('session')!;
    assert.equal(login.status, 200);
    const rows = await server.app.db.selectFrom('sessions').select('token_hash').execute();
    assert.ok(rows.length > 0);
    assert.ok(rows.every((r) => r.token_hash !== token && r.token_hash.length === 64));
  });
});

describe('GET /api/auth/status', () => {
  it('reports setupRequired on a fresh instance and no user without a session (D-AUTH-6)', async () => {
    const server = await startServer();
    const response = await clientOf(server).get('/api/auth/status');
    assert.deepEqual(response.body, {
      setupRequired: true,
      authenticated: false,
      user: null,
      passwordLogin: true,
      singleSignOn: null,
    });
    await server.close();
  });
});

describe('POST /api/auth/login', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await setupOwner(server, { email: 'owner@example.com' });
    await createUserClient(server, 'bob@example.com', 'bobs password');
  });
  after(() => server.close());

  it('signs into the owner account without email (D-AUTH-3)', async () => {
    const client = clientOf(server);
    assert.equal((await client.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
    assert.equal((await client.get('/api/auth/status')).body.user.isOwner, true);
  });

  it('signs into another user with email, ignoring case', async () => {
    const client = clientOf(server);
    const response = await client.post('/api/auth/login', {
      email: 'BOB@example.com',
      password: 'bobs password',
    });
    assert.equal(response.status, 200);
    assert.equal((await client.get('/api/auth/status')).body.user.email, 'bob@example.com');
  });

  it('answers the same 401 for a wrong password and an unknown email (docs/interface.md#authentication-rule-4)', async () => {
    const client = clientOf(server);
    const wrong = await client.post('/api/auth/login', {
      email: 'bob@example.com',
      password: 'not bobs password',
    });
    const unknown = await client.post('/api/auth/login', {
      email: 'eve@example.com',
      password: 'whatever pw',
    });
    const owner = await client.post('/api/auth/login', { password: 'wrong password' });
    for (const response of [wrong, unknown, owner]) {
      assert.equal(response.status, 401);
      assert.equal(response.body.code, 'invalid_credentials');
      assert.equal(sessionCookie(response), undefined);
    }
    assert.deepEqual(wrong.body, unknown.body);
  });

  it('sets Secure on the cookie when the request came over HTTPS via a trusted proxy', async () => {
    const proxied = await startServer({ env: { TRUST_PROXY: 'true' } });
    await setupOwner(proxied);
    const response = await clientOf(proxied).post(
      '/api/auth/login',
      { password: OWNER_PASSWORD },
      { headers: { 'x-forwarded-proto': 'https' } },
    );
    assert.match(sessionCookie(response)!, /Secure/);
    await proxied.close();
  });
});

describe('the session cookie when PUBLIC_URL is https (D-AUTH-4, issue 26)', () => {
  // Plain http to the server, as from a proxy that sends no X-Forwarded-Proto, or says http.
  for (const [trustProxy, proxyHeaders] of [
    ['', {}],
    ['', { 'x-forwarded-proto': 'https' }],
    ['true', {}],
    ['true', { 'x-forwarded-proto': 'http' }],
  ] as const) {
    it(`is Secure on setup, login and logout (TRUST_PROXY=${trustProxy || 'unset'}, ${JSON.stringify(proxyHeaders)})`, async () => {
      const server = await startServer({
        env: { PUBLIC_URL: 'https://notes.example.com', TRUST_PROXY: trustProxy },
      });
      try {
        const client = clientOf(server);
        const headers = { host: 'notes.example.com', ...proxyHeaders };
        const setup = await client.post('/api/auth/setup', { password: OWNER_PASSWORD }, { headers });
        assert.equal(setup.status, 201);
        const login = await client.post('/api/auth/login', { password: OWNER_PASSWORD }, { headers });
        assert.equal(login.status, 200);
        const logout = await client.post('/api/auth/logout', undefined, { headers });
        assert.equal(logout.status, 200);
        for (const response of [setup, login, logout]) {
          assert.match(sessionCookie(response)!, /; Secure(;|$)/);
        }
      } finally {
        await server.close();
      }
    });
  }

  it('is not Secure over plain http when PUBLIC_URL is http', async () => {
    const server = await startServer({ env: { PUBLIC_URL: 'http://notes.example.com' } });
    try {
      const headers = { host: 'notes.example.com' };
      const setup = await clientOf(server).post('/api/auth/setup', { password: OWNER_PASSWORD }, { headers });
      assert.equal(setup.status, 201);
      assert.doesNotMatch(sessionCookie(setup)!, /Secure/);
    } finally {
      await server.close();
    }
  });
});

describe('login rate limit (D-AUTH-3)', () => {
  it('answers the 11th attempt in a minute from one IP with 429 and Retry-After', async () => {
    const server = await startServer();
    await setupOwner(server);
    const client = clientOf(server);
    for (let i = 0; i < 9; i++) {
      assert.equal((await client.post('/api/auth/login', { password: 'wrong password' })).status, 401);
    }
    assert.equal((await client.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
    const limited = await client.post('/api/auth/login', { password: OWNER_PASSWORD });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    await server.close();
  });
});

describe('sessions', () => {
  it('renews the cookie once half its life has passed and expires after 30 days (D-AUTH-4)', async () => {
    const clock = new ManualClock();
    const server = await startServer({ clock });
    const client = await setupOwner(server);
    clock.advance(10 * DAY);
    const early = await client.get('/api/notes');
    assert.equal(early.status, 200);
    assert.equal(sessionCookie(early), undefined, 'no renewal before half-life');
    clock.advance(6 * DAY);
    const renewed = await client.get('/api/notes');
    assert.match(sessionCookie(renewed)!, /Max-Age=2592000/);
    clock.advance(29 * DAY);
    assert.equal((await client.get('/api/notes')).status, 200, 'renewal extended the session');
    clock.advance(31 * DAY);
    const expired = await client.get('/api/notes');
    assert.equal(expired.status, 401);
    assert.equal(expired.body.code, 'unauthenticated');
    await server.close();
  });

  it('logout deletes the session server-side and clears the cookie (docs/interface.md#authentication-rule-2)', async () => {
    const server = await startServer();
    const client = await setupOwner(server);
    const stolen = client.cookies.get('session')!;
    const response = await client.post('/api/auth/logout');
    assert.equal(response.status, 200);
    assert.match(sessionCookie(response)!, /session=;.*Expires=Thu, 01 Jan 1970/);
    const replay = await clientOf(server).get('/api/notes', {
      headers: { cookie: `session=${stolen}` },
    });
    assert.equal(replay.status, 401);
    assert.equal((await clientOf(server).post('/api/auth/logout')).status, 401);
    await server.close();
  });

  it('answers 401 for a forged session cookie', async () => {
    const server = await startServer();
    await setupOwner(server);
    const response = await clientOf(server).get('/api/notes', {
      headers: { cookie: `session=${'A'.repeat(43)}` },
    });
    assert.equal(response.status, 401);
    await server.close();
  });
});

describe('POST /api/auth/password', () => {
  it('changes the password and ends every other session of the user (D-AUTH-4)', async () => {
    const server = await startServer();
    const phone = await setupOwner(server);
    const laptop = clientOf(server);
    await laptop.post('/api/auth/login', { password: OWNER_PASSWORD });

    const wrong = await phone.post('/api/auth/password', {
      currentPassword: 'nope nope',
      newPassword: 'new password',
    });
    assert.equal(wrong.status, 403);
    assert.equal(wrong.body.code, 'wrong_password');
    const tooShort = await phone.post('/api/auth/password', {
      currentPassword: OWNER_PASSWORD,
      newPassword: 'short',
    });
    assert.equal(tooShort.status, 400);

    const ok = await phone.post('/api/auth/password', {
      currentPassword: OWNER_PASSWORD,
      newPassword: 'new password',
    });
    assert.equal(ok.status, 200);
    assert.equal((await phone.get('/api/notes')).status, 200, 'the session that changed it stays');
    assert.equal((await laptop.get('/api/notes')).status, 401, 'other sessions end');
    const fresh = clientOf(server);
    assert.equal((await fresh.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 401);
    assert.equal((await fresh.post('/api/auth/login', { password: 'new password' })).status, 200);
    await server.close();
  });
});

describe('PATCH /api/users/me', () => {
  let server: TestServer;
  let owner: TestClient;
  before(async () => {
    server = await startServer();
    owner = await setupOwner(server, { email: 'owner@example.com' });
    await createUserClient(server, 'taken@example.com');
  });
  after(() => server.close());

  it('changes email and displayName (D-AUTH-6)', async () => {
    const response = await owner.patch('/api/users/me', {
      displayName: '  Grace ',
      email: 'grace@example.com',
    });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, {
      id: 1,
      email: 'grace@example.com',
      displayName: 'Grace',
      isOwner: true,
    });
  });

  it('answers 409 email_taken for another user’s email, in any case', async () => {
    const response = await owner.patch('/api/users/me', { email: 'TAKEN@example.com' });
    assert.equal(response.status, 409);
    assert.equal(response.body.code, 'email_taken');
  });

  it('refuses a malformed email, a blank or over-long displayName', async () => {
    for (const body of [
      { email: 'not-an-email' },
      { displayName: '   ' },
      { displayName: 'x'.repeat(101) },
    ]) {
      assert.equal((await owner.patch('/api/users/me', body)).status, 400, JSON.stringify(body));
    }
  });
});

describe('cross-origin guard (D-AUTH-5)', () => {
  // The test client talks to 127.0.0.1, which PUBLIC_URL alone would not let in (0007).
  const server = useServer({
    env: { PUBLIC_URL: 'https://notes.example.com', ALLOWED_HOSTS: '127.0.0.1' },
  });
  const owner = useOwner(server);

  it('refuses a cookie-authenticated write from a forged Origin and changes nothing', async () => {
    const response = await owner.post(
      '/api/notes',
      { title: 'csrf' },
      { headers: { origin: 'https://evil.example' } },
    );
    assert.equal(response.status, 403);
    assert.equal(response.body.code, 'cross_origin');
    assert.equal((await owner.get('/api/notes')).body.length, 0);
  });

  it('refuses forged-origin PATCH, DELETE and login as well', async () => {
    const note = (await owner.post('/api/notes', { title: 'keep' })).body;
    const headers = { origin: 'null' };
    assert.equal((await owner.patch(`/api/notes/${note.id}`, { title: 'x' }, { headers })).status, 403);
    assert.equal((await owner.delete(`/api/notes/${note.id}`, { headers })).status, 403);
    const login = await clientOf(server).post('/api/auth/login', { password: OWNER_PASSWORD }, { headers });
    assert.equal(login.status, 403);
    assert.equal((await owner.get(`/api/notes/${note.id}`)).body.title, 'keep');
  });

  it('accepts the server’s own origin, PUBLIC_URL, and requests without Origin', async () => {
    assert.equal((await owner.post('/api/notes', {}, { headers: { origin: server.url } })).status, 201);
    assert.equal(
      (await owner.post('/api/notes', {}, { headers: { origin: 'https://notes.example.com' } })).status,
      201,
    );
    assert.equal((await owner.post('/api/notes', {})).status, 201);
  });

  it('is not skipped by an Authorization header on a session-only route', async () => {
    const response = await owner.post(
      '/api/settings/api-keys',
      { name: 'csrf' },
      { headers: { origin: 'https://evil.example', authorization: 'Bearer nsk_whatever' } },
    );
    assert.equal(response.status, 403);
    assert.equal(response.body.code, 'cross_origin');
    assert.deepEqual((await owner.get('/api/settings/api-keys')).body, []);
  });

  it('does not let a session cookie authenticate a read from another origin either', async () => {
    const foreign = await owner.get('/api/notes', { headers: { origin: 'https://evil.example' } });
    assert.equal(foreign.status, 401);
    assert.equal(foreign.body.code, 'unauthenticated');
    assert.equal((await owner.get('/api/notes', { headers: { origin: server.url } })).status, 200);
  });
});

describe('logs (D-OPS-4)', () => {
  it('never contain passwords, session tokens or cookies', async () => {
    const server = await startLoggedServer();
    const client = await setupOwner(server);
    await client.post('/api/auth/login', { password: OWNER_PASSWORD });
    await client.get('/api/notes', { headers: { authorization: 'Bearer nsk_secretsecret' } });
    await client.get('/api/shared/sharetokensecret');
    const token = client.cookies.get('session')!;
    await server.close();
    assert.ok(server.log().includes('"reqId"'), 'logs carry a request id');
    for (const secret of [OWNER_PASSWORD, token, 'nsk_secretsecret', 'sharetokensecret']) {
      assert.ok(!server.log().includes(secret), `log contains ${secret}`);
    }
  });
});

describe('password hashing cost (D-AUTH-7)', () => {
  const hashes = async (server: { app: TestServer['app'] }) =>
    (await server.app.db.selectFrom('users').select('password_hash').orderBy('id').execute()).map(
      (row) => row.password_hash,
    );

  it('hashes at the production scrypt cost (N=32768, r=8, p=1) unless a test lowers it, and signs in against it', async () => {
    const dataDir = tempDataDir();
    // Built without the test helper, which lowers the cost: what `npm start` runs.
    const app = await buildApp(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { logger: false });
    try {
      const setup = await app.inject({
        method: 'POST',
        url: '/api/auth/setup',
        payload: { password: OWNER_PASSWORD },
      });
      assert.equal(setup.statusCode, 201, setup.body);
      const session = setup.cookies.find((cookie) => cookie.name === 'session')!;
      const added = await app.inject({
        method: 'POST',
        url: '/api/users',
        cookies: { session: session.value },
        payload: { email: 'user@example.com', displayName: 'User', password: 'another secret' },
      });
      assert.equal(added.statusCode, 201, added.body);
      const stored = await hashes({ app });
      assert.equal(stored.length, 2);
      for (const hash of stored) assert.match(hash, /^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
      // Signing in verifies against the full-cost hash, as every production sign-in does.
      const signIn = (password: string) =>
        app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { email: 'user@example.com', password },
        });
      assert.equal((await signIn('another secret')).statusCode, 200);
      assert.equal((await signIn('wrong password')).statusCode, 401);
    } finally {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('test servers hash cheaply, and a cheap hash still tells right from wrong passwords', async () => {
    const server = await startServer();
    try {
      await setupOwner(server);
      const [hash] = await hashes(server);
      assert.match(hash!, /^scrypt\$2\$1\$1\$/);
      const client = clientOf(server);
      assert.equal((await client.post('/api/auth/login', { password: 'wrong password' })).status, 401);
      assert.equal((await client.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
    } finally {
      await server.close();
    }
  });

  it('replaces a hash made at another cost when its user signs in, and only that hash (decision 0046)', async () => {
    const server = await startServer();
    try {
      await setupOwner(server);
      // A hash from before a change of cost: N=4 where this server hashes at N=2.
      const older = await createPasswordHasher({ N: 4, r: 1, p: 1 }).hash(OWNER_PASSWORD);
      await server.app.db.updateTable('users').set({ password_hash: older }).execute();
      const client = clientOf(server);
      assert.equal((await client.post('/api/auth/login', { password: 'wrong password' })).status, 401);
      assert.deepEqual(await hashes(server), [older], 'a failed sign-in changes nothing');
      assert.equal((await client.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
      const [replaced] = await hashes(server);
      assert.match(replaced!, /^scrypt\$2\$1\$1\$/);
      assert.equal((await client.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
      assert.deepEqual(await hashes(server), [replaced], 'a hash at the current cost stays');
      // A password changed between the check and the replacement is never undone.
      const [owner] = await server.app.db.selectFrom('users').select('id').execute();
      await replacePasswordHash(server.app.db, owner!.id, older, 'scrypt$2$1$1$stale$stale');
      assert.deepEqual(await hashes(server), [replaced]);
    } finally {
      await server.close();
    }
  });

  it('gives the memory of production-cost hashing back: four at once leave the process as large as before', async (t) => {
    const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header
      .glibcVersionRuntime;
    if (!glibc) return t.skip('glibc only: the rule is about its allocator');
    // Its own process: RSS before and after, with nothing else of a test runner's in between
    // (the source through tsx, from the repository root, where tests run, bundled or not).
    const script = `
      import { createPasswordHasher } from ${JSON.stringify(pathToFileURL(path.resolve('src/features/users/passwords.ts')).href)};
      const hasher = createPasswordHasher();
      await hasher.hash('warm up');
      const before = process.memoryUsage.rss();
      for (let round = 0; round < 2; round++) await Promise.all([1, 2, 3, 4].map((n) => hasher.hash('password ' + n)));
      await new Promise((resolve) => setTimeout(resolve, 100));
      console.log(JSON.stringify({ grownMiB: (process.memoryUsage.rss() - before) / 1048576 }));`;
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    const { grownMiB } = JSON.parse(output) as { grownMiB: number };
    // At 16 MiB a hash (the cost before decision 0046) each of libuv's four threads kept its
    // 16 MiB: ~48 MiB more.
    assert.ok(grownMiB < 12, `RSS grew by ${grownMiB.toFixed(1)} MiB`);
  });
});
