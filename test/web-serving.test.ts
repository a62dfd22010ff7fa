import assert from 'node:assert/strict';
import fs from 'node:fs';
import { PassThrough } from 'node:stream';
import { before, describe, it } from 'node:test';
import { APP_CSP } from '../src/features/webapp/routes.js';
import { startServer, tempDataDir, useServer } from './helpers/server.js';
import { buildWebApp, bundleAssets, WEB_BUNDLE } from './helpers/webApp.js';

before(buildWebApp);

const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

describe('the web app is served at / by the API server (issue 13)', () => {
  const server = useServer({ webRoot: WEB_BUNDLE });
  const get = (path: string, headers: Record<string, string> = HTML) =>
    fetch(`${server.url}${path}`, { headers });

  it('answers / with index.html, revalidated on every load, under the app CSP', async () => {
    const response = await get('/');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/html/);
    assert.equal(response.headers.get('cache-control'), 'no-cache');
    assert.equal(response.headers.get('content-security-policy'), APP_CSP);
    assert.match(await response.text(), /<div id="app">/);
  });

  it('caches hashed assets for a year, precompressed with brotli', async () => {
    for (const file of bundleAssets()) {
      const response = await get(`/assets/${file}`, { 'accept-encoding': 'br' });
      assert.equal(response.status, 200, file);
      assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.equal(response.headers.get('content-encoding'), 'br');
      assert.equal(await response.text(), fs.readFileSync(`${WEB_BUNDLE}/assets/${file}`, 'utf8'));
    }
  });

  it('serves the service worker and the manifest with no-cache and the app CSP (the SW runs under it)', async () => {
    for (const path of ['/sw.js', '/manifest.webmanifest']) {
      const response = await get(path, {});
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('cache-control'), 'no-cache', path);
      assert.equal(response.headers.get('content-security-policy'), APP_CSP, path);
    }
    const manifest = await (await get('/manifest.webmanifest', {})).json();
    assert.equal(manifest.start_url, '/');
    for (const icon of manifest.icons) assert.equal((await get(icon.src, {})).status, 200, icon.src);
  });

  it('allows only its own origin: no inline script, no other site', () => {
    const directives = new Map(APP_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    assert.deepEqual(directives.get('script-src'), ["'self'"]);
    assert.deepEqual(directives.get('default-src'), ["'self'"]);
    assert.deepEqual(directives.get('frame-ancestors'), ["'none'"]);
    assert.doesNotMatch(APP_CSP, /unsafe|https?:|\*/);
    // No inline script in the page the CSP protects, so none has to be allowed.
    const page = fs.readFileSync(`${WEB_BUNDLE}/index.html`, 'utf8');
    assert.doesNotMatch(page, /<script(?![^>]*\ssrc=)[^>]*>/);
  });

  it('answers the app for other navigations (client routes), with the app CSP', async () => {
    for (const path of ['/archive', '/label/work', '/note/3f1c?x=1']) {
      const response = await get(path);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-security-policy'), APP_CSP);
      assert.match(await response.text(), /<div id="app">/);
    }
  });

  it('keeps the API 404s JSON, even for a browser, and so non-HTML requests and other methods', async () => {
    const cases: [string, string, Record<string, string>][] = [
      ['GET', '/api/nothing-here', HTML],
      ['GET', '/api', HTML],
      ['GET', '/archive', { accept: 'application/json' }],
      ['POST', '/archive', HTML],
    ];
    for (const [method, path, headers] of cases) {
      const response = await fetch(`${server.url}${path}`, { method, headers });
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal((await response.json()).code, 'route_not_found');
      assert.notEqual(response.headers.get('content-security-policy'), APP_CSP);
    }
  });

  it('leaves the share pages their own 404 page and CSP', async () => {
    const response = await get('/s/not-a-token');
    assert.equal(response.status, 404);
    assert.doesNotMatch(await response.text(), /<div id="app">/);
    assert.notEqual(response.headers.get('content-security-policy'), APP_CSP);
  });

  it('keeps the API behind authentication and its own CSP', async () => {
    const response = await get('/api/notes', {});
    assert.equal(response.status, 401);
    assert.match(response.headers.get('content-security-policy')!, /default-src 'none'/);
  });
});

describe('without a built web app', () => {
  it('serves the API only and says so in the log', async () => {
    const stream = new PassThrough();
    let log = '';
    stream.on('data', (chunk) => {
      log += chunk;
    });
    const server = await startServer({
      webRoot: tempDataDir(),
      logStream: stream,
      env: { LOG_LEVEL: 'warn' },
    });
    try {
      const page = await fetch(`${server.url}/`, { headers: HTML });
      assert.equal(page.status, 404);
      assert.equal((await page.json()).code, 'route_not_found');
      assert.equal((await fetch(`${server.url}/api/auth/status`)).status, 200);
      assert.match(log, /The web app is not built .*serving the API only/);
    } finally {
      await server.close();
    }
  });
});
