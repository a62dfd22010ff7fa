import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { skipWithoutChromium, useBrowser } from './helpers/browser.js';
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

/**
 * swagger-ui can take the document to show from the page's query (`?url=`, `?configUrl=`): a
 * link to this server's docs would then show an attacker's document, with its links and "Try it
 * out" requests, under this server's origin. The docs page shows this server's document only.
 */
describe('GET /api/docs from an attacker’s link', { skip: skipWithoutChromium }, () => {
  let server: TestServer;
  let attacker: http.Server;
  let attackerUrl: string;
  const attackerRequests: string[] = [];
  const browser = useBrowser({ webApp: false });
  before(async () => {
    server = await startServer();
    attacker = http.createServer((request, response) => {
      attackerRequests.push(request.url ?? '');
      const document = {
        openapi: '3.1.0',
        info: { title: 'Attacker API', version: '6.6.6' },
        paths: {},
      };
      const body = request.url?.startsWith('/config') ? { url: `${attackerUrl}/spec.json` } : document;
      response.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
      response.end(JSON.stringify(body));
    });
    attacker.listen(0, '127.0.0.1');
    await once(attacker, 'listening');
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  });
  after(async () => {
    attacker?.close();
    await server.close();
  });

  for (const query of ['url', 'configUrl']) {
    it(`ignores ?${query}=, showing this server’s document`, async () => {
      const target = query === 'url' ? `${attackerUrl}/spec.json` : `${attackerUrl}/config.json`;
      const page = await browser.newPage();
      try {
        await page.goto(`${server.url}/api/docs/?${query}=${encodeURIComponent(target)}`);
        await page.getByRole('heading', { name: /Notes API/ }).waitFor({ timeout: 15_000 });
        assert.equal(page.url(), `${server.url}/api/docs/`);
        assert.equal(await page.getByText('Attacker API').count(), 0);
        assert.deepEqual(attackerRequests, []);
      } finally {
        await page.close();
      }
    });
  }
});
