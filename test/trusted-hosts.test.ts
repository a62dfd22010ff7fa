import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { OWNER_PASSWORD, rawRequest, setupOwner, TestClient, type TestResponse } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * DNS rebinding (docs/decisions/0007-trusted-hosts.md): a page on attacker.example whose name
 * now resolves to this server sends requests with `Host: attacker.example` and, being
 * same-origin with itself, `Origin: http://attacker.example`. They must reach no route.
 */
function assertMisdirected(response: TestResponse): void {
  assert.equal(response.status, 421, response.text);
  assert.equal(response.body.statusCode, 421);
  assert.equal(response.body.error, 'Misdirected Request');
  assert.equal(response.body.code, 'misdirected_request');
  assert.equal(response.headers.get('set-cookie'), null);
}

const port = (server: TestServer) => new URL(server.url).port;

/** Sends `text` on a fresh connection and returns everything the server wrote until it closed. */
function exchange(server: TestServer, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port(server)), '127.0.0.1', () => socket.end(text));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

describe('requests for a host the server does not know (no PUBLIC_URL, no ALLOWED_HOSTS)', () => {
  let server: TestServer;
  let attacker: { host: string; origin: string };
  before(async () => {
    server = await startServer();
    attacker = {
      host: `attacker.example:${port(server)}`,
      origin: `http://attacker.example:${port(server)}`,
    };
  });
  after(() => server.close());

  it('cannot create the owner account of an instance waiting for setup', async () => {
    for (const host of [
      attacker.host,
      'attacker.example',
      'localhost.attacker.example',
      '127.0.0.1.nip.io',
    ]) {
      const response = await rawRequest(server.url, 'POST', '/api/auth/setup', {
        headers: { host, origin: `http://${host}` },
        json: { password: 'attacker password' },
      });
      assertMisdirected(response);
    }
    assert.equal((await new TestClient(server.url).get('/api/auth/status')).body.setupRequired, true);
  });

  it('cannot sign in, read or write notes with a stolen-by-proxy cookie, or read a share page', async () => {
    const owner = await setupOwner(server.url);
    const note = (await owner.post('/api/notes', { title: 'private' })).body;
    const token = (await owner.post(`/api/notes/${note.id}/share`)).body.token;
    const headers = { host: attacker.host, origin: attacker.origin };
    const cookie = [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

    assertMisdirected(
      await rawRequest(server.url, 'POST', '/api/auth/login', {
        headers,
        json: { password: OWNER_PASSWORD },
      }),
    );
    const list = await rawRequest(server.url, 'GET', '/api/notes', { headers: { ...headers, cookie } });
    assertMisdirected(list);
    assert.ok(!list.text.includes('private'));
    assertMisdirected(
      await rawRequest(server.url, 'POST', '/api/notes', {
        headers: { ...headers, cookie },
        json: { title: 'planted' },
      }),
    );
    const page = await rawRequest(server.url, 'GET', `/s/${token}`, { headers });
    assertMisdirected(page);
    assert.ok(!page.text.includes('private'));
    assertMisdirected(await rawRequest(server.url, 'GET', `/api/shared/${token}`, { headers }));
    assertMisdirected(await rawRequest(server.url, 'GET', '/no/such/route', { headers }));
    assert.deepEqual(
      (await owner.get('/api/notes')).body.map((n: { title: string }) => n.title),
      ['private'],
    );
  });

  it('refuses a request without a Host header (HTTP/1.0)', async () => {
    const answer = await exchange(server, 'GET /api/health HTTP/1.0\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 421 /);
    assert.match(answer, /"code":"misdirected_request"/);
  });

  it('answers loopback names and IP literals, which DNS cannot re-point', async () => {
    for (const host of [
      `127.0.0.1:${port(server)}`,
      '127.0.0.1',
      `localhost:${port(server)}`,
      'LOCALHOST.',
      `notes.localhost:${port(server)}`,
      `[::1]:${port(server)}`,
      '192.168.1.20',
    ]) {
      const response = await rawRequest(server.url, 'GET', '/api/health', { headers: { host } });
      assert.equal(response.status, 200, host);
    }
  });
});

describe('requests for a host the server does not know (PUBLIC_URL and ALLOWED_HOSTS)', () => {
  const statusFor = async (server: TestServer, headers: Record<string, string>, path = '/api/auth/status') =>
    (await rawRequest(server.url, 'GET', path, { headers })).status;

  it('answers only PUBLIC_URL’s host (any port) and the ALLOWED_HOSTS entries (their port)', async () => {
    const server = await startServer({
      env: { PUBLIC_URL: 'https://notes.example.com', ALLOWED_HOSTS: 'notes.lan:8080, Backup.Example.org' },
    });
    try {
      for (const host of [
        'notes.example.com',
        'NOTES.example.com:443',
        'notes.lan:8080',
        'backup.example.org:1',
      ]) {
        assert.equal(await statusFor(server, { host }), 200, host);
      }
      for (const host of [
        'notes.lan:9090',
        'notes.lan',
        'example.com',
        'localhost',
        `127.0.0.1:${port(server)}`,
      ]) {
        assert.equal(await statusFor(server, { host }), 421, host);
      }
    } finally {
      await server.close();
    }
  });

  it('takes the host from X-Forwarded-Host only from a trusted proxy', async () => {
    const proxied = await startServer({
      env: { PUBLIC_URL: 'https://notes.example.com', TRUST_PROXY: '127.0.0.1' },
    });
    const direct = await startServer({ env: { PUBLIC_URL: 'https://notes.example.com' } });
    try {
      const internal = `127.0.0.1:${port(proxied)}`;
      assert.equal(
        await statusFor(proxied, { host: internal, 'x-forwarded-host': 'notes.example.com' }),
        200,
      );
      assert.equal(
        await statusFor(proxied, { host: 'notes.example.com', 'x-forwarded-host': 'attacker.example' }),
        421,
      );
      assert.equal(
        await statusFor(direct, { host: 'attacker.example', 'x-forwarded-host': 'notes.example.com' }),
        421,
      );
    } finally {
      await Promise.all([proxied.close(), direct.close()]);
    }
  });

  it('answers a local health probe (loopback name, loopback connection), and only /api/health', async () => {
    const server = await startServer({ env: { PUBLIC_URL: 'https://notes.example.com' } });
    try {
      for (const host of [
        'localhost',
        `localhost:${port(server)}`,
        `127.0.0.1:${port(server)}`,
        '[::1]:3000',
      ]) {
        assert.equal(await statusFor(server, { host }, '/api/health'), 200, host);
        assert.equal(await statusFor(server, { host }, '/api/health?probe=1'), 200, host);
        assert.equal(await statusFor(server, { host }), 421, `${host}: any other route`);
      }
      for (const host of [
        'notes.localhost',
        'localhost.attacker.example',
        '192.168.1.20',
        'attacker.example',
      ]) {
        assert.equal(await statusFor(server, { host }, '/api/health'), 421, host);
      }
    } finally {
      await server.close();
    }
  });
});
