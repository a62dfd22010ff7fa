/**
 * sharp, the MCP SDK and prom-client (and the shared page's Intl.DateTimeFormat) are made or
 * loaded when a request first needs them, not at start-up (docs/decisions/0017-performance.md:
 * idle memory); the pg driver only on PostgreSQL (src/db/postgresShared.ts). A server process of
 * its own, on SQLite, records every module it loads (helpers/lazyModulesChild.ts).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { tempDataDir } from './helpers/server.js';

const LAZY_PACKAGES = [
  '/node_modules/sharp/',
  '/node_modules/@modelcontextprotocol/sdk/',
  '/node_modules/prom-client/',
  '/node_modules/pg/',
];

it('an everyday server loads neither sharp, nor the MCP SDK, nor prom-client until needed, nor pg on SQLite', async () => {
  const dir = tempDataDir();
  const urlsFile = path.join(dir, 'loaded.txt');
  const pngFile = path.join(dir, 'dot.png');
  fs.writeFileSync(
    pngFile,
    await sharp({ create: { width: 4, height: 4, channels: 3, background: '#3a7' } })
      .png()
      .toBuffer(),
  );
  await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', path.resolve('test/helpers/lazyModulesChild.ts'), path.join(dir, 'data'), pngFile],
    { env: { ...process.env, LOADED_URLS_FILE: urlsFile } },
  );
  const [idle, upload, mcp] = fs.readFileSync(urlsFile, 'utf8').split(/^-- \w+\n/m);
  const loadedIn = (part: string | undefined, pkg: string) =>
    part?.split('\n').some((url) => url.includes(pkg));
  assert.ok(loadedIn(idle, '/node_modules/fastify/'), 'the recorder sees the server loading');
  for (const pkg of LAZY_PACKAGES) assert.ok(!loadedIn(idle, pkg), `${pkg} loaded before it was needed`);
  assert.ok(
    !loadedIn(idle, 'Intl.DateTimeFormat'),
    'an Intl.DateTimeFormat made before a shared page needed it',
  );
  assert.ok(loadedIn(upload, '/node_modules/sharp/'), 'an upload loads sharp');
  assert.ok(loadedIn(mcp, '/node_modules/@modelcontextprotocol/sdk/'), 'an MCP request loads the SDK');
  fs.rmSync(dir, { recursive: true, force: true });
});
