import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { JSON_BODY_LIMIT } from '../src/app.js';
import { MAX_UPLOAD_BYTES } from '../src/features/attachments/multipart.js';
import { OWNER_PASSWORD, setupOwner, TestClient } from './helpers/client.js';
import { startServer, type TestServer, useOwner, useServer } from './helpers/server.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const APP_ORIGIN = 'https://app.example.com';

function cookieOf(client: TestClient): string {
  return [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
}

/** A multipart form with one `file` part of `size` bytes (enough to still be in flight). */
function uploadForm(size: number): FormData {
  const body = new FormData();
  body.append('file', new Blob([new Uint8Array(size)], { type: 'image/png' }), 'photo.png');
  return body;
}

/** The same form as raw bytes with its content type, for requests written to a socket. */
async function rawUploadForm(size: number): Promise<{ type: string; bytes: Buffer }> {
  const request = new Request('http://x/', { method: 'POST', body: uploadForm(size) });
  return {
    type: request.headers.get('content-type')!,
    bytes: Buffer.from(await request.arrayBuffer()),
  };
}

function httpRequest(
  method: string,
  path: string,
  headers: Record<string, string | number>,
  body: Uint8Array = Buffer.alloc(0),
) {
  const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]);
}

/**
 * Opens a socket to the server, writes `data` and collects everything until the server closes
 * (the last request says `connection: close`; a client half-close would abort the others).
 */
function exchange(server: TestServer, data: Buffer): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(received).toString('latin1')));
    socket.on('error', reject);
    socket.write(data);
  });
}

/**
 * Writes `data` without ending the request and resolves with the first complete response
 * (status, headers, body), then waits for the server to close the connection.
 */
function firstResponseThenClose(server: TestServer, data: Buffer) {
  const { port } = new URL(server.url);
  return new Promise<{ status: number; headers: Record<string, string>; body: any }>((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let text = '';
    let response: { status: number; headers: Record<string, string>; body: any } | undefined;
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (response || end < 0) return;
      const [statusLine, ...headerLines] = text.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      const body = text.slice(end + 4);
      if (body.length < Number(headers['content-length'])) return;
      response = { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body) };
    });
    // Resolves only once the server has closed the connection: it must, for these requests.
    socket.on('end', () => (response ? resolve(response) : reject(new Error(`no response: ${text}`))));
    socket.on('error', reject);
    socket.write(data);
  });
}

/** Sends one request with fetch: 'answered' when its status is the expected one. */
async function answer([expected, url, init]: [number, string, RequestInit]): Promise<string> {
  try {
    const response = await fetch(url, init);
    await response.arrayBuffer();
    return response.status === expected ? 'answered' : `${response.status} instead of ${expected}`;
  } catch (err) {
    return `network error: ${(err as Error).cause ?? err}`;
  }
}

function statusesIn(responses: string): number[] {
  return [...responses.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
}

describe('refusals reach the client before a request body is read', () => {
  let server: TestServer;
  let owner: TestClient;
  let cookie: string;
  let readOnlyKey: string;
  let noteId: string;
  before(async () => {
    server = await startServer();
    owner = await setupOwner(server.url);
    cookie = cookieOf(owner);
    readOnlyKey = (await owner.post('/api/settings/api-keys', { name: 'reader', scopes: ['notes:read'] }))
      .body.key;
    noteId = (await owner.post('/api/notes', { title: 'kept' })).body.id;
  });
  after(() => server.close());

  /** Refused uploads of a 256 KiB form, each with the status it must get. */
  function refusedUploads(): [number, string, RequestInit][] {
    const url = (id: string) => `${server.url}/api/notes/${id}/attachments`;
    return [
      [404, url(randomUUID()), { headers: { cookie } }],
      [401, url(noteId), {}],
      [403, url(noteId), { headers: { cookie, origin: 'https://evil.example' } }],
      [403, url(noteId), { headers: { authorization: `Bearer ${readOnlyKey}` } }],
      [415, url(noteId), { headers: { cookie, 'content-type': 'text/csv' } }],
    ].map(([status, target, init]) => [
      status as number,
      target as string,
      { method: 'POST', body: uploadForm(256 * KiB), ...(init as RequestInit) },
    ]);
  }

  it('answers 50 refused uploads sent with fetch, each with its status', async () => {
    const sent = Array.from({ length: 10 }, refusedUploads).flat();
    assert.equal(sent.length, 50);
    const answers = await Promise.all(sent.map(answer));
    assert.deepEqual(answers, Array(50).fill('answered'));
    assert.equal((await owner.get(`/api/notes/${noteId}`)).body.version, 1);
  });

  it('answers refused sync pushes and note writes sent with fetch, each with its status', async () => {
    const json = JSON.stringify({ changes: [], title: 'x'.repeat(512 * KiB) });
    const sent: [number, string, RequestInit][] = [];
    for (const [method, path] of [
      ['POST', '/api/sync'],
      ['PATCH', `/api/notes/${noteId}`],
      ['POST', '/api/notes'],
    ]) {
      const request = (status: number, headers: Record<string, string>) =>
        sent.push([status, `${server.url}${path}`, { method, body: json, headers }]);
      for (let i = 0; i < 4; i++) {
        request(401, { 'content-type': 'application/json' });
        request(403, { cookie, origin: 'https://evil.example', 'content-type': 'application/json' });
        request(415, { cookie, 'content-type': 'text/csv' });
      }
    }
    const answers = await Promise.all(sent.map(answer));
    assert.deepEqual(answers, Array(sent.length).fill('answered'));
    assert.equal((await owner.get(`/api/notes/${noteId}`)).body.title, 'kept');
  });

  it('reads a refused body to its end and keeps the connection for the next request', async () => {
    const form = await rawUploadForm(MiB);
    const upload = (id: string, headers: Record<string, string>) =>
      httpRequest(
        'POST',
        `/api/notes/${id}/attachments`,
        { 'content-type': form.type, 'content-length': form.bytes.length, ...headers },
        form.bytes,
      );
    const json = Buffer.from(JSON.stringify({ changes: [], pad: 'x'.repeat(MiB) }));
    const push = (headers: Record<string, string>) =>
      httpRequest(
        'POST',
        '/api/sync',
        { 'content-type': 'application/json', 'content-length': json.length, ...headers },
        json,
      );
    const health = httpRequest('GET', '/api/health', { connection: 'close' });
    for (const [status, refused] of [
      [404, upload(randomUUID(), { cookie })],
      [404, upload('not-a-note', { cookie })],
      [401, upload(noteId, {})],
      [403, upload(noteId, { cookie, origin: 'https://evil.example' })],
      [403, upload(noteId, { authorization: `Bearer ${readOnlyKey}` })],
      [401, push({})],
      [403, push({ cookie, origin: 'https://evil.example' })],
    ] as const) {
      // Both requests are sent at once: the second is answered only if the connection survived.
      const responses = await exchange(server, Buffer.concat([refused, health]));
      assert.deepEqual(statusesIn(responses), [status, 200], responses);
    }
  });

  it('answers 413 at once and closes for a body declared beyond the route’s limit, before authenticating', async () => {
    for (const [path, limit, code] of [
      ['/api/notes', JSON_BODY_LIMIT, 'payload_too_large'],
      [`/api/notes/${noteId}/attachments`, MAX_UPLOAD_BYTES, 'file_too_large'],
    ] as const) {
      // Only the headers are sent: the answer must not wait for the body.
      const headers = { 'content-type': 'application/json', 'content-length': limit + 1 };
      const response = await firstResponseThenClose(server, httpRequest('POST', path, headers));
      assert.equal(response.status, 413, path);
      assert.equal(response.headers.connection, 'close');
      assert.equal(response.body.code, code);
    }
  });

  it('answers 413 and closes when a refused chunked body runs past the route’s limit', async () => {
    const head = httpRequest('POST', '/api/notes', {
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });
    const data = Buffer.alloc(JSON_BODY_LIMIT + 1, 0x20);
    // No final chunk: the server must stop reading at its limit, not wait for the end.
    const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    const response = await firstResponseThenClose(server, Buffer.concat([head, chunk]));
    assert.equal(response.status, 413);
    assert.equal(response.headers.connection, 'close');
    assert.deepEqual(response.body, {
      statusCode: 413,
      error: 'Payload Too Large',
      code: 'payload_too_large',
      message: 'The request body is too large',
    });
  });
});

describe('note routes', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('answer 404 note_not_found to an id that is not a uuid, whatever its length (D-ERR-2)', async () => {
    const attachmentId = randomUUID();
    const routes: [string, string, { json?: unknown; body?: FormData }?][] = [
      ['GET', ''],
      ['PATCH', '', { json: { title: 'x' } }],
      ['DELETE', ''],
      ['GET', '/attachments'],
      ['GET', `/attachments?attachmentId=${attachmentId}`],
      ['POST', '/attachments', { body: uploadForm(100) }],
      ['DELETE', `/attachments?attachmentId=${attachmentId}`],
      ['GET', '/collaborators'],
      ['POST', '/collaborators', { json: { userId: 2 } }],
      ['DELETE', '/collaborators?userId=2'],
      ['POST', '/share'],
      ['DELETE', '/share'],
    ];
    const uuid = randomUUID();
    const ids = [
      'x',
      '123',
      'not-a-uuid',
      `${uuid}0`,
      uuid.replaceAll('-', ''),
      'a'.repeat(71),
      'a'.repeat(5000),
    ];
    for (const id of ids) {
      for (const [method, suffix, options] of routes) {
        const path = `/api/notes/${id}${suffix}`;
        const response = await owner.request(method, path, options);
        assert.equal(response.status, 404, `${method} ${path.slice(0, 80)}: ${response.text.slice(0, 200)}`);
        assert.deepEqual(response.body, {
          statusCode: 404,
          error: 'Not Found',
          code: 'note_not_found',
          message: 'Note not found',
        });
      }
    }
  });

  it('take If-Match: * as any current version on PATCH and DELETE (RFC 9110), not as a missing note', async () => {
    const note = (await owner.post('/api/notes', { title: 'v1' })).body;
    await owner.patch(`/api/notes/${note.id}`, { title: 'v2' });
    const patched = await owner.patch(
      `/api/notes/${note.id}`,
      { title: 'v3' },
      { headers: { 'if-match': '*' } },
    );
    assert.equal(patched.status, 200);
    assert.equal(patched.body.version, 3);
    const deleted = await owner.delete(`/api/notes/${note.id}`, { headers: { 'if-match': ' * ' } });
    assert.equal(deleted.status, 200);
    const gone = await owner.patch(
      `/api/notes/${note.id}`,
      { title: 'v4' },
      { headers: { 'if-match': '*' } },
    );
    assert.equal(gone.status, 404);
    assert.equal(gone.body.code, 'note_not_found');
  });

  const emptyJson = { headers: { 'content-type': 'application/json' } };

  it('accept an empty JSON body where they take no body', async () => {
    const note = (await owner.post('/api/notes', { title: 'x' })).body;
    assert.equal((await owner.request('POST', `/api/notes/${note.id}/share`, emptyJson)).status, 201);
    assert.equal((await owner.request('DELETE', `/api/notes/${note.id}/share`, emptyJson)).status, 204);
    assert.equal((await owner.request('DELETE', `/api/notes/${note.id}`, emptyJson)).status, 200);
    const session = new TestClient(server.url);
    await session.post('/api/auth/login', { password: OWNER_PASSWORD });
    assert.equal((await session.request('POST', '/api/auth/logout', emptyJson)).status, 200);
    assert.equal((await session.get('/api/auth/status')).body.authenticated, false);
  });

  it('still answer 400 invalid_json to an empty JSON body where they need one', async () => {
    const note = (await owner.post('/api/notes', { title: 'x' })).body;
    for (const [method, path] of [
      ['POST', '/api/notes'],
      ['PATCH', `/api/notes/${note.id}`],
      ['POST', '/api/sync'],
    ]) {
      const response = await owner.request(method!, path!, emptyJson);
      assert.equal(response.status, 400, `${method} ${path}`);
      assert.equal(response.body.code, 'invalid_json');
    }
  });
});

describe('CORS for browser clients on other origins (CORS_ORIGINS)', () => {
  let server: TestServer;
  let owner: TestClient;
  let key: string;
  let noteId: string;
  before(async () => {
    server = await startServer({ env: { CORS_ORIGINS: `${APP_ORIGIN}, chrome-extension://abcdefgh` } });
    owner = await setupOwner(server.url);
    key = (await owner.post('/api/settings/api-keys', { name: 'web app' })).body.key;
    noteId = (await owner.post('/api/notes', { title: 'kept' })).body.id;
  });
  after(() => server.close());

  function corsHeaders(response: { headers: Headers }): Record<string, string> {
    return Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));
  }

  const preflight = (origin: string, method = 'PATCH') => ({
    headers: {
      cookie: '',
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization, content-type, if-match',
    },
  });

  it('answers a listed origin’s preflight, never allowing credentials', async () => {
    for (const origin of [APP_ORIGIN, 'chrome-extension://abcdefgh']) {
      const response = await owner.request('OPTIONS', `/api/notes/${noteId}`, preflight(origin));
      assert.equal(response.status, 204);
      const headers = corsHeaders(response);
      assert.equal(headers['access-control-allow-origin'], origin);
      assert.match(headers['access-control-allow-methods']!, /PATCH/);
      assert.match(headers['access-control-allow-headers']!, /authorization/);
      assert.match(headers['access-control-allow-headers']!, /if-match/);
      assert.equal(headers['access-control-allow-credentials'], undefined);
    }
  });

  it('lets a listed origin read answers to API-key requests, errors included', async () => {
    const asApp = { cookie: '', origin: APP_ORIGIN, authorization: `Bearer ${key}` };
    const read = await owner.request('GET', `/api/notes/${noteId}`, { headers: asApp });
    assert.equal(read.status, 200);
    assert.equal(corsHeaders(read)['access-control-allow-origin'], APP_ORIGIN);
    assert.match(corsHeaders(read)['access-control-expose-headers']!, /etag/);
    assert.equal(corsHeaders(read)['access-control-allow-credentials'], undefined);
    const write = await owner.patch(`/api/notes/${noteId}`, { pinned: true }, { headers: asApp });
    assert.equal(write.status, 200);
    assert.equal(corsHeaders(write)['access-control-allow-origin'], APP_ORIGIN);
    const badKey = await owner.request('GET', '/api/notes', {
      headers: { ...asApp, authorization: 'Bearer nsk_revoked' },
    });
    assert.equal(badKey.status, 401);
    assert.equal(corsHeaders(badKey)['access-control-allow-origin'], APP_ORIGIN);
  });

  it('gives an unlisted origin no CORS headers, preflight or not', async () => {
    for (const origin of ['https://evil.example', 'https://app.example.com.evil.example', 'null']) {
      const answer = await owner.request('OPTIONS', `/api/notes/${noteId}`, preflight(origin));
      assert.notEqual(answer.status, 204);
      assert.deepEqual(corsHeaders(answer), {}, origin);
      const read = await owner.request('GET', `/api/notes/${noteId}`, {
        headers: { cookie: '', origin, authorization: `Bearer ${key}` },
      });
      assert.deepEqual(corsHeaders(read), {}, origin);
    }
  });

  it('answers with exactly these CORS headers, Vary included, with or without an Origin', async () => {
    /** Status, Vary, every Access-Control-* header and, for a 204, Content-Length (Safari's). */
    const answer = async (method: string, path: string, headers: Record<string, string>) => {
      const response = await owner.request(method, path, { headers });
      const length =
        response.status === 204 ? { 'content-length': response.headers.get('content-length') } : {};
      return {
        status: response.status,
        vary: response.headers.get('vary'),
        ...length,
        ...corsHeaders(response),
      };
    };
    const asApp = { cookie: '', origin: APP_ORIGIN, authorization: `Bearer ${key}` };
    const exposed =
      'etag, x-sync-time, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset, ' +
      'www-authenticate, content-disposition, mcp-session-id';
    const cases: [string, string, Record<string, string>, Record<string, unknown>][] = [
      // No Origin (this server's own pages, scripts): Vary only, the preflight route a 404.
      ['GET', `/api/notes/${noteId}`, {}, { status: 200, vary: 'Origin' }],
      [
        'GET',
        `/api/notes/${noteId}`,
        { cookie: '', authorization: asApp.authorization },
        { status: 200, vary: 'Origin' },
      ],
      [
        'OPTIONS',
        `/api/notes/${noteId}`,
        { cookie: '', 'access-control-request-method': 'GET' },
        { status: 404, vary: 'Origin' },
      ],
      // A listed origin without an API key, on a public route: nothing readable.
      ['GET', '/api/health', { cookie: '', origin: APP_ORIGIN }, { status: 200, vary: 'Origin' }],
      ['GET', '/api/health', { origin: APP_ORIGIN }, { status: 200, vary: 'Origin' }],
      // A listed origin with an API key.
      [
        'GET',
        `/api/notes/${noteId}`,
        asApp,
        {
          status: 200,
          vary: 'Origin',
          'access-control-allow-origin': APP_ORIGIN,
          'access-control-expose-headers': exposed,
        },
      ],
      // A listed origin's preflight, with or without Access-Control-Request-Method.
      ...[preflight(APP_ORIGIN).headers, { cookie: '', origin: APP_ORIGIN }].map(
        (headers): [string, string, Record<string, string>, Record<string, unknown>] => [
          'OPTIONS',
          `/api/notes/${noteId}`,
          headers,
          {
            status: 204,
            vary: 'Origin',
            'content-length': '0',
            'access-control-allow-origin': APP_ORIGIN,
            'access-control-expose-headers': exposed,
            'access-control-allow-methods': 'GET, HEAD, POST, PATCH, DELETE',
            'access-control-allow-headers':
              'authorization, content-type, if-match, if-none-match, mcp-session-id, mcp-protocol-version',
            'access-control-max-age': '600',
          },
        ],
      ),
      // An unlisted origin, preflight or API key: Vary only.
      [
        'OPTIONS',
        `/api/notes/${noteId}`,
        preflight('https://evil.example').headers,
        { status: 404, vary: 'Origin' },
      ],
      [
        'GET',
        `/api/notes/${noteId}`,
        { ...asApp, origin: 'https://evil.example' },
        { status: 200, vary: 'Origin' },
      ],
    ];
    for (const [method, path, headers, expected] of cases) {
      assert.deepEqual(
        await answer(method, path, headers),
        expected,
        `${method} ${path} ${JSON.stringify(headers)}`,
      );
    }
  });

  it('never authenticates a cookie sent from another origin, listed or not', async () => {
    for (const origin of [APP_ORIGIN, 'https://evil.example']) {
      const read = await owner.get(`/api/notes/${noteId}`, { headers: { origin } });
      assert.equal(read.status, 401, origin);
      assert.deepEqual(corsHeaders(read), {});
      const me = await owner.get('/api/users/me', { headers: { origin } });
      assert.equal(me.status, 401);
      // D-AUTH-5: a cookie-authenticated write from another origin stays refused.
      const write = await owner.patch(`/api/notes/${noteId}`, { title: 'forged' }, { headers: { origin } });
      assert.equal(write.status, 403);
      assert.equal(write.body.code, 'cross_origin');
      assert.deepEqual(corsHeaders(write), {});
    }
    // The same cookie from this server's own pages works.
    assert.equal((await owner.get(`/api/notes/${noteId}`, { headers: { origin: server.url } })).status, 200);
    assert.equal((await owner.get(`/api/notes/${noteId}`)).body.title, 'kept');
  });
});

describe('CORS without CORS_ORIGINS', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('sends no CORS headers to anyone', async () => {
    const response = await new TestClient(server.url).request('OPTIONS', '/api/notes', {
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'GET' },
    });
    assert.equal(response.status, 404);
    assert.ok(![...response.headers.keys()].some((name) => name.startsWith('access-control-')));
  });
});
