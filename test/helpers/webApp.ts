import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const WEB_BUNDLE = path.resolve('dist/web');

/**
 * Builds dist/web when web/ changed (a stat walk when it did not): `npm test` does it in
 * test/build.mjs; this makes a single file run by hand load the current app too.
 */
export function buildWebApp(): void {
  const result = spawnSync(process.execPath, ['scripts/build-if-stale.mjs', '--web'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`building the web app failed:\n${result.stderr}`);
}

/** The hashed file names of the bundle's assets (JavaScript and CSS). */
export function bundleAssets(): string[] {
  return fs.readdirSync(path.join(WEB_BUNDLE, 'assets')).filter((file) => /\.(js|css)$/.test(file));
}
