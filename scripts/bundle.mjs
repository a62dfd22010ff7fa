/**
 * The esbuild settings of the server's bundles: the one `npm start` runs (dist/main.js, built by
 * `node scripts/bundle.mjs [repository]`) and the test build's (test/build.mjs). One bundle
 * instead of ~1,000 modules: resolving and reading them cost the server about a second of its
 * start-up and ~20 MiB of memory (docs/decisions/0024-server-bundle.md). esbuild only strips
 * types; `npm run typecheck` (and `npm run build`, first) checks them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const SERVER_BUNDLE_OPTIONS = {
  bundle: true,
  // Code reached only through import() (the MCP SDK, prom-client...) goes to chunks, loaded
  // when first used, as without a bundle.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  sourcesContent: false,
  logLevel: 'warning',
  // Native addons, and packages that read their own files from disk, load from node_modules.
  // So does @fastify/cookie: it import()s the CommonJS `cookie`, which a split bundle would
  // turn into a chunk with only a default export (no stringifySetCookie: every login a 500);
  // ioredis likewise (import()ed when REDIS_URL is set: no named Redis export).
  // @touch4it/ical-timezones reads its zone files through __dirname (the calendar feed's 500 in
  // the bundled tests when it was inside the bundle).
  external: ['better-sqlite3', 'sharp', '@fastify/cookie', 'ioredis', '@touch4it/ical-timezones'],
  // Bundled CommonJS packages call require(); give the ES module output one.
  banner: {
    // Aliased: bundled sources may import createRequire themselves (src/db/checkpointer.ts).
    js: "import { createRequire as __bannerRequire } from 'node:module'; const require = __bannerRequire(import.meta.url);",
  },
};

/**
 * Bundled packages whose own files the server reads at run time: swagger-ui's page (its scripts,
 * styles, logo; src/app.ts). It is bundled because an external copy loads its own yaml and
 * @fastify/static beside the bundle's (~3 MiB of RSS); its package is shipped for those files.
 */
export const PACKAGES_READ_AT_RUN_TIME = ['@fastify/swagger-ui'];

/** Bundles src/main.ts of `root` into dist/main.js (and dist/chunks/), replacing the last build. */
export async function bundleServer(root) {
  const { build } = await import('esbuild');
  const dist = path.join(root, 'dist');
  fs.rmSync(path.join(dist, 'chunks'), { recursive: true, force: true });
  await build({
    ...SERVER_BUNDLE_OPTIONS,
    // V8 keeps a script's whole source on the heap, and one character beyond Latin-1 (a dash in a
    // dependency's comment is enough) stores all of it as UTF-16: 6.5 MB for a 3.2 MB bundle.
    // Without whitespace and comments it is 2.1 MB of Latin-1, ~5 MiB less RSS. The source maps
    // still map stack traces (`node --enable-source-maps`); the tests' build keeps its lines.
    minifyWhitespace: true,
    absWorkingDir: root,
    entryPoints: ['src/main.ts'],
    outdir: dist,
  });
  const source = fs.readFileSync(path.join(dist, 'main.js'), 'utf8');
  const wide = source.search(/[\u0100-\u{10ffff}]/u);
  if (wide >= 0) {
    throw new Error(
      `dist/main.js holds a character beyond Latin-1 (near "${source.slice(Math.max(0, wide - 40), wide + 10)}"), which doubles its size in memory`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await bundleServer(path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..')));
}
