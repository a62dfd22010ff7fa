// `npm start` and `npm test`: build only what is older than its sources, so a start takes a
// second, and a production install (`npm ci --omit=dev`, no esbuild or Vite) starts from the
// dist/ it shipped with. Two outputs: the server (esbuild → dist/main.js, scripts/bundle.mjs)
// and the web app (Vite → dist/web, docs/decisions/0013-web-app.md).
//   node scripts/build-if-stale.mjs [repository] [--web]   (--web: only the web app, for npm test)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const args = process.argv.slice(2);
const webOnly = args.includes('--web');
// The repository (a test passes another folder laid out the same way).
const root = path.resolve(args.find((arg) => !arg.startsWith('--')) ?? path.join(import.meta.dirname, '..'));

const TARGETS = [
  {
    name: 'server',
    output: 'dist/main.js',
    inputs: ['src', 'tsconfig.json', 'package.json'],
    tool: 'esbuild',
    package: 'esbuild',
    // Run with the repository as its argument; the package above is what it needs.
    script: 'scripts/bundle.mjs',
    message: 'Bundling the server (sources changed since the last build)…',
  },
  {
    name: 'web',
    output: 'dist/web/index.html',
    // The app bundles src/shared; a checkout without web/ (an old layout) has no app to build.
    inputs: ['web', 'src/shared', 'package.json'],
    required: 'web',
    tool: 'Vite',
    package: 'vite',
    bin: 'bin/vite.js',
    args: ['build', '--logLevel', 'warn', '--config', path.join(root, 'web', 'vite.config.ts')],
    message: 'Building the web app (web/ changed since the last build)…',
  },
];

function newestChange(entry) {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(entry).map((name) => newestChange(path.join(entry, name))));
}

function builtAt(output) {
  try {
    return statSync(output).mtimeMs;
  } catch {
    return -1;
  }
}

for (const target of TARGETS) {
  if (webOnly && target.name !== 'web') continue;
  if (target.required && !existsSync(path.join(root, target.required))) continue;
  const output = path.join(root, target.output);
  const inputs = target.inputs.map((p) => path.join(root, p)).filter((p) => existsSync(p));
  if (Math.max(...inputs.map(newestChange)) <= builtAt(output)) continue;

  let command;
  try {
    // Through package.json: Vite's exports map does not list its bin.
    const manifest = createRequire(path.join(root, 'package.json')).resolve(`${target.package}/package.json`);
    command = target.script
      ? [path.join(import.meta.dirname, '..', target.script), root]
      : [path.join(path.dirname(manifest), target.bin), ...target.args];
  } catch {
    console.error(
      builtAt(output) < 0
        ? `${path.dirname(target.output)}/ is missing and ${target.tool} is not installed: run \`npm install\` (with dev dependencies), then \`npm start\`.`
        : `The sources are newer than ${path.dirname(target.output)}/ and ${target.tool} is not installed: run \`npm install\` and \`npm run build\`.`,
    );
    process.exit(1);
  }
  console.error(target.message);
  const result = spawnSync(process.execPath, command, { stdio: 'inherit', cwd: root });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
