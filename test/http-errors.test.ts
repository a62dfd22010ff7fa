import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { clientOf, setupOwner, type TestClient } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

describe('error shape (D-ERR-1) and bad input (D-ERR-3)', () => {
  let server: TestServer;
  let owner: TestClient;
  let noteId: string;
  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
    noteId = (await owner.post('/api/notes', { title: 'stable', content: 'kept' })).body.id;
  });
  after(() => server.close());

  function assertErrorShape(body: any, status: number) {
    assert.equal(body.statusCode, status);
    assert.equal(body.error, STATUS_CODES[status], 'error is the reason phrase (D-ERR-1)');
    assert.match(body.code, /^[a-z][a-z0-9_]*$/);
    assert.equal(typeof body.message, 'string');
    assert.ok(!JSON.stringify(body).includes('/work/'), 'no file-system paths');
    assert.ok(!/at .*\(.*:\d+:\d+\)/.test(JSON.stringify(body)), 'no stack traces');
  }

  it('answers unknown routes with 404 route_not_found in the same shape', async () => {
    const response = await owner.get('/api/nope');
    assert.equal(response.status, 404);
    assertErrorShape(response.body, 404);
    assert.equal(response.body.code, 'route_not_found');
  });

  it('answers an unknown method with 404 route_not_found in the same shape', async () => {
    const response = await owner.request('PUT', `/api/notes/${noteId}`, { json: {} });
    assert.equal(response.status, 404);
    assertErrorShape(response.body, 404);
    assert.equal(response.body.code, 'route_not_found');
  });

  it('never answers 5xx or changes data for random JSON bodies (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), async (body) => {
        for (const [method, path] of [
          ['POST', '/api/notes'],
          ['PATCH', `/api/notes/${noteId}`],
          ['POST', '/api/auth/login'],
          ['PATCH', '/api/users/me'],
        ] as const) {
          const response = await owner.request(method, path, { json: body });
          assert.ok(response.status < 500, `${method} ${path} ${JSON.stringify(body)} → ${response.status}`);
          if (response.status >= 400) assertErrorShape(response.body, response.status);
        }
      }),
      { seed: 20261121, numRuns: 60 },
    );
    const note = (await owner.get(`/api/notes/${noteId}`)).body;
    assert.equal(note.content, 'kept');
  });

  it('never answers 5xx for random query strings and path ids (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), async (value) => {
        const v = encodeURIComponent(value);
        for (const path of [
          `/api/notes?filter=${v}&tag=${v}&color=${v}`,
          `/api/search?q=${v}&limit=${v}`,
          `/api/notes/${v || 'x'}`,
        ]) {
          const response = await owner.get(path);
          assert.ok(response.status < 500, `${path} → ${response.status}`);
        }
      }),
      { seed: 20261121, numRuns: 80 },
    );
  });

  it('answers a huge query string or header without a 5xx', async () => {
    const q = 'x'.repeat(5000);
    const response = await owner.get(`/api/search?q=${q}`);
    assert.equal(response.status, 400);
    const match = await owner.patch(
      `/api/notes/${noteId}`,
      {},
      { headers: { 'if-match': '"9'.padEnd(500, '9') } },
    );
    assert.equal(match.status, 400);
    assert.equal((await owner.get(`/api/notes/${randomUUID()}`)).status, 404);
  });
});

describe('OpenAPI (D-OPS-5)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('serves an OpenAPI 3.1 document built from the route schemas, without auth', async () => {
    const response = await clientOf(server).get('/api/openapi.json');
    assert.equal(response.status, 200);
    const doc = response.body;
    assert.equal(doc.openapi, '3.1.0');
    for (const path of [
      '/api/notes',
      '/api/notes/{id}',
      '/api/search',
      '/api/tags',
      '/api/auth/login',
      '/api/health',
    ]) {
      assert.ok(doc.paths[path], `missing ${path}`);
    }
    const color =
      doc.paths['/api/notes'].post.requestBody.content['application/json'].schema.properties.color;
    assert.ok(color.enum.includes('coral'));
    assert.ok(doc.components.schemas.Note);
    assert.ok(doc.components.schemas.ErrorBody);
  });

  it('serves readable docs at /api/docs', async () => {
    const response = await clientOf(server).get('/api/docs/');
    assert.equal(response.status, 200);
    assert.match(response.text, /<html/i);
  });
});
