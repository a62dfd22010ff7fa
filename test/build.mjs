/**
 * Bundles every test file (and src/main.ts, for the tests that spawn the server) into
 * .tmp/test-build for `npm test`. Loading the app through tsx cost each test process 2–3 s of
 * CPU (every import passes its loader hooks), and even compiled, resolving and reading the
 * hundreds of modules behind the app cost ~0.7 s more than one bundle. Code shared by several
 * files goes to chunks/; native and file-serving packages stay in node_modules. esbuild only
 * strips types (well under a second); type errors are `npm run typecheck`'s job. One file at a
 * time still runs through tsx: `node --import tsx --test test/<file>.test.ts`.
 * It first builds the web app when web/ changed (the browser tests load dist/web).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { SERVER_BUNDLE_OPTIONS } from '../scripts/bundle.mjs';

// The browser tests serve the web app's bundle (dist/web): built here when web/ changed.
const web = spawnSync(process.execPath, ['scripts/build-if-stale.mjs', '--web'], { stdio: 'inherit' });
if (web.status !== 0) process.exit(web.status ?? 1);

const OUT_DIR = '.tmp/test-build';

const testFiles = fs
  .readdirSync('test')
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => path.join('test', file));

fs.rmSync(OUT_DIR, { recursive: true, force: true });
await build({
  ...SERVER_BUNDLE_OPTIONS,
  entryPoints: [...testFiles, 'src/main.ts'],
  outdir: OUT_DIR,
  outbase: '.',
  // The OpenAPI test's tools (the TypeScript compiler reads __filename) and the tests' OpenID
  // provider stay out of it too.
  external: [
    ...SERVER_BUNDLE_OPTIONS.external,
    'playwright-core',
    'oidc-provider',
    'typescript',
    'openapi-typescript',
    '@redocly/openapi-core',
  ],
});
// src/version.ts reads ../package.json from its file (test/ or chunks/ here); the copy also
// marks the output as ES modules.
fs.copyFileSync('package.json', path.join(OUT_DIR, 'package.json'));

// One process per core, each importing its share of the test files, rather than a process per
// file: starting a process and loading the bundle cost ~1.3 s of CPU a file, more than most
// files' tests (decision 0010). Within a process the files' tests run one after another, as they
// did in their own processes; the reports still name each test's own file.
const GROUPS = 2;
const bundled = testFiles.map((file) => `./${file.replace(/\.ts$/, '.js')}`).sort();
for (let group = 0; group < GROUPS; group++) {
  const imports = bundled.filter((_, i) => i % GROUPS === group).map((file) => `await import('${file}');`);
  fs.writeFileSync(path.join(OUT_DIR, `group-${group}.mjs`), `${imports.join('\n')}\n`);
}
