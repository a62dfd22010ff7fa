import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { clientOf, createUserClient, ownerClientFor } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

const TOKEN = 'scrape-token-0123456789';

describe('Prometheus metrics at /metrics', () => {
  it('are off unless METRICS=true', async () => {
    const server = await startServer();
    try {
      assert.equal((await clientOf(server).get('/metrics')).status, 404);
    } finally {
      await server.close();
    }
  });

  describe('enabled without a token: the instance owner only', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ env: { METRICS: 'true' } });
    });
    after(() => server.close());

    it('refuses strangers (401) and users who are not the owner (403)', async () => {
      assert.equal((await clientOf(server).get('/metrics')).status, 401);
      const { client: user } = await createUserClient(server, 'user@example.com');
      assert.equal((await user.get('/metrics')).status, 403);
    });

    it('measures requests by route pattern (never ids), database statements, the event loop and push sizes', async () => {
      const owner = await ownerClientFor(server);
      const id = randomUUID();
      await owner.post('/api/notes', { id, title: 'measured' });
      await owner.get(`/api/notes/${id}`);
      const push = await owner.post('/api/sync', {
        changes: [{ noteId: randomUUID(), operation: 'create', timestamp: 1, data: { title: 'x' } }],
      });
      assert.equal(push.status, 200);
      const response = await owner.get('/metrics');
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
      const text = response.text;
      assert.match(
        text,
        /notes_http_request_seconds_count\{method="GET",route="\/api\/notes\/:id",status="2xx"\} 1/,
      );
      assert.ok(!text.includes(id), 'a note id became a label');
      assert.match(text, /notes_db_query_seconds_count [1-9]/);
      assert.match(text, /nodejs_eventloop_lag_seconds/);
      assert.match(text, /notes_sync_push_changes_count 1/);
    });
  });

  describe('enabled with METRICS_TOKEN: that Bearer token only', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ env: { METRICS: 'true', METRICS_TOKEN: TOKEN } });
    });
    after(() => server.close());

    it('answers the token and refuses anything else, the owner included', async () => {
      const client = clientOf(server);
      assert.equal(
        (await client.get('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).status,
        200,
      );
      for (const authorization of [`Bearer ${TOKEN}x`, 'Bearer nope', '']) {
        const response = await client.get('/metrics', { headers: { authorization } });
        assert.equal(response.status, 401, authorization);
        assert.equal(response.body.code, 'unauthenticated');
      }
      const owner = await ownerClientFor(server);
      assert.equal((await owner.get('/metrics')).status, 401);
    });
  });

  it('needs a token of at least 16 characters', () => {
    assert.throws(() => loadConfig({ METRICS: 'true', METRICS_TOKEN: 'short' }), /METRICS_TOKEN/);
    assert.throws(() => loadConfig({ METRICS: 'yes' }), /METRICS/);
  });
});
