import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestClient } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

describe('GET /api/docs over plain http (D-OPS-5)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  // On a LAN address over http, upgrade-insecure-requests sends the page's scripts to https,
  // where nothing answers: the docs would be a blank page.
  it('serves the docs page and its scripts without asking browsers to upgrade to https', async () => {
    const client = new TestClient(server.url);
    for (const path of ['/api/docs/', '/api/docs/static/swagger-ui-bundle.js', '/api/health']) {
      const response = await client.get(path);
      assert.equal(response.status, 200, path);
      const policy = response.headers.get('content-security-policy') ?? '';
      assert.ok(!policy.includes('upgrade-insecure-requests'), `${path}: ${policy}`);
    }
  });
});
