/**
 * Copies the packages the server bundle loads at run time into `<target>/node_modules`: the
 * bundle's externals (scripts/bundle.mjs) and what they depend on, as npm resolved them
 * (`npm query`), and the bundled packages whose own files the server reads (without their
 * dependencies, which are in the bundle); everything else is inside dist/. A native addon keeps
 * only its compiled `.node` files, not its sources and build intermediates. The container image's runtime stage
 * copies this instead of node_modules: ~40 MiB instead of ~120 (docs/benchmarks.md,
 * "Container image"). Usage: node scripts/runtime-modules.mjs <target>
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGES_READ_AT_RUN_TIME, SERVER_BUNDLE_OPTIONS } from './bundle.mjs';

const target = process.argv[2];
if (!target) throw new Error('usage: node scripts/runtime-modules.mjs <target>');

const selector = [
  ...SERVER_BUNDLE_OPTIONS.external.map((name) => `#${name}, #${name} *`),
  ...PACKAGES_READ_AT_RUN_TIME.map((name) => `#${name}`),
].join(', ');
const found = JSON.parse(execFileSync('npm', ['query', selector], { encoding: 'utf8', maxBuffer: 64 << 20 }));
const locations = [...new Set(found.map((node) => node.location))];

/** Whether a file of a native addon's package is needed at run time: its compiled addons only. */
const nativeRuntimeFile = (relative) =>
  !/^(deps|src)\//.test(relative) &&
  (!relative.startsWith('build/') || /^build\/Release\/[^/]+\.node$/.test(relative));

for (const location of locations) {
  const native = fs.existsSync(path.join(location, 'binding.gyp'));
  fs.cpSync(location, path.join(target, location), {
    recursive: true,
    // Nested node_modules are packages of their own, copied when the query lists them.
    filter: (source) => {
      const relative = path.relative(location, source);
      if (relative === '') return true;
      if (relative.split(path.sep)[0] === 'node_modules') return false;
      return !native || fs.statSync(source).isDirectory() || nativeRuntimeFile(relative);
    },
  });
}
console.log(`${locations.length} packages copied into ${path.join(target, 'node_modules')}`);
