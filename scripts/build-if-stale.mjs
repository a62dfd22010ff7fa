// `npm start`: compile only when a source is newer than dist/, so a start takes a second, and
// a production install (`npm ci --omit=dev`, no TypeScript) starts from the dist/ it shipped with.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// The repository (a test passes another folder laid out the same way).
const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));
const output = path.join(root, 'dist', 'main.js');

function newestChange(entry) {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(entry).map((name) => newestChange(path.join(entry, name))));
}

function builtAt() {
  try {
    return statSync(output).mtimeMs;
  } catch {
    return -1;
  }
}

const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'].map((p) => path.join(root, p));
if (Math.max(...inputs.map(newestChange)) <= builtAt()) process.exit(0);

let tsc;
try {
  tsc = createRequire(path.join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  console.error(
    builtAt() < 0
      ? 'dist/ is missing and TypeScript is not installed: run `npm install` (with dev dependencies), then `npm start`.'
      : 'The sources are newer than dist/ and TypeScript is not installed: run `npm install` and `npm run build`.',
  );
  process.exit(1);
}
console.error('Compiling TypeScript (sources changed since the last build)…');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (result.status !== 0) process.exit(result.status ?? 1);
