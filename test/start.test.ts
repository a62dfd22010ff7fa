import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { tempDataDir } from './helpers/server.js';

const SCRIPT = path.resolve('scripts/build-if-stale.mjs');

/**
 * A folder laid out like the repository after `npm prune --omit=dev`: sources, tsconfig.json,
 * package.json, maybe a dist/, and no esbuild to bundle with.
 */
function productionCopy(options: { built: 'fresh' | 'stale' | 'missing' }): string {
  const root = tempDataDir();
  for (const file of ['package.json', 'tsconfig.json']) fs.writeFileSync(path.join(root, file), '{}');
  fs.mkdirSync(path.join(root, 'src'));
  fs.writeFileSync(path.join(root, 'src', 'main.ts'), 'export {};');
  if (options.built !== 'missing') {
    fs.mkdirSync(path.join(root, 'dist'));
    fs.writeFileSync(path.join(root, 'dist', 'main.js'), '');
    const now = Date.now() / 1000;
    // dist/ an hour after the sources, or an hour before them.
    const built = options.built === 'fresh' ? now + 3600 : now - 3600;
    fs.utimesSync(path.join(root, 'dist', 'main.js'), built, built);
  }
  return root;
}

const run = (root: string) => spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });

describe('npm start compiles only when the sources changed (scripts/build-if-stale.mjs)', () => {
  it('starts from dist/ at once when it is newer than every source, esbuild or not', () => {
    const result = run(productionCopy({ built: 'fresh' }));
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr, '');
  });

  it('bundles when a source is newer, and says what to do when esbuild is not installed', () => {
    const stale = run(productionCopy({ built: 'stale' }));
    assert.equal(stale.status, 1);
    assert.match(
      stale.stderr,
      /sources are newer than dist\/ and esbuild is not installed: run `npm install`/,
    );
    const missing = run(productionCopy({ built: 'missing' }));
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /dist\/ is missing and esbuild is not installed/);
  });

  it('builds the web app when web/ is newer than dist/web, and only that with --web', () => {
    const root = productionCopy({ built: 'fresh' });
    fs.mkdirSync(path.join(root, 'web'));
    fs.writeFileSync(path.join(root, 'web', 'index.html'), '');
    const result = spawnSync(process.execPath, [SCRIPT, root, '--web'], { encoding: 'utf8' });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /dist\/web\/ is missing and Vite is not installed/);
    fs.mkdirSync(path.join(root, 'dist', 'web'));
    fs.writeFileSync(path.join(root, 'dist', 'web', 'index.html'), '');
    const fresh = spawnSync(process.execPath, [SCRIPT, root, '--web'], { encoding: 'utf8' });
    assert.equal(fresh.status, 0, fresh.stderr);
  });
});
