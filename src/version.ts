import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The package version, read once from the nearest package.json above this module: one level up
 * from src/ (tsx) and dist/main.js, two from a bundle's chunk in dist/chunks/.
 */
function packageVersion(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const APP_VERSION: string = packageVersion(import.meta.dirname);
