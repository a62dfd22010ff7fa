import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import semver from 'semver';
import { setupOwner } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

// Tests run from the repository root (npm test runs them bundled elsewhere).
const ROOT = process.cwd();
const readJson = (file: string) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));

describe('installed dependencies', () => {
  // The Node 20 releases package.json claims. Odd majors (21) and majors not released yet are not
  // held against a package (better-sqlite3 lists the majors it has prebuilt binaries for).
  it('all run on every Node 20 release package.json engines claims', () => {
    const claimed = `${readJson('package.json').engines.node} <21`;
    const excluding: string[] = [];
    for (const location of Object.keys(readJson('package-lock.json').packages)) {
      const manifest = path.join(location, 'package.json');
      // Optional packages for other platforms are in the lock but not installed.
      if (location === '' || !fs.existsSync(path.join(ROOT, manifest))) continue;
      const { name, version, engines } = readJson(manifest);
      if (engines?.node && !semver.subset(claimed, engines.node))
        excluding.push(`${name}@${version} (${location}) wants node ${engines.node}`);
    }
    assert.deepEqual(excluding, []);
  });
});

/**
 * package.json overrides @fastify/cookie's and light-my-request's cookie@2 (Node >= 22, ESM only)
 * with cookie@1 (docs/decisions/0001-stack-and-tooling.md). Cookies set and read over HTTP are
 * covered in auth.test.ts; this covers the other user, `app.inject` (light-my-request).
 */
describe('cookies through app.inject with cookie@1', () => {
  let server: TestServer;
  let session: string;
  before(async () => {
    server = await startServer();
    session = (await setupOwner(server.url)).cookies.get('session')!;
  });
  after(() => server.close());

  it('sends an injected session cookie that the app reads', async () => {
    const authenticated = async (cookie: string) =>
      (
        await server.app.inject({ method: 'GET', url: '/api/auth/status', cookies: { session: cookie } })
      ).json().authenticated;
    assert.equal(await authenticated(session), true);
    assert.equal(await authenticated('x'), false);
  });
});
