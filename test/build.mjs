/**
 * Compiles src, test and bench to JavaScript in .tmp/test-build for `npm test`. Loading the app
 * through tsx costs each test process 2–3 s of CPU (every import goes through its loader
 * hooks) against under a second compiled; esbuild only strips types (~0.2 s for the whole
 * tree), type errors are `npm run typecheck`'s job. One file at a time still runs through tsx:
 * `node --import tsx --test test/<file>.test.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const OUT_DIR = '.tmp/test-build';
/** Tests import bench's corpus generator; bench's own subfolders hold data, not code. */
const SOURCES = [
  ['src', { recursive: true }],
  ['test', { recursive: true }],
  ['bench', { recursive: false }],
];

const entryPoints = SOURCES.flatMap(([dir, options]) =>
  fs
    .readdirSync(dir, { ...options, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.join(dir, file)),
);

fs.rmSync(OUT_DIR, { recursive: true, force: true });
await build({
  entryPoints,
  outdir: OUT_DIR,
  outbase: '.',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
});
// src/version.ts reads ../package.json next to src; the copy also marks the output as ES modules.
fs.copyFileSync('package.json', path.join(OUT_DIR, 'package.json'));
