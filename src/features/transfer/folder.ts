import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeHashed } from '../../files.js';
import type { SourceFiles } from './sources.js';

/**
 * A folder of Markdown files (the `import` command), read like an archive: names are paths
 * relative to the folder with `/`; symbolic links are not followed, so nothing outside the
 * folder is read.
 */
export async function openFolder(root: string): Promise<SourceFiles> {
  const sizes = new Map<string, number>();
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    const name = path.relative(root, full).split(path.sep).join('/');
    sizes.set(name, (await fs.lstat(full)).size);
  }
  const pathOf = (name: string) => {
    if (!sizes.has(name)) throw new Error(`${name} is not in the folder`);
    return path.join(root, ...name.split('/'));
  };
  return {
    names: [...sizes.keys()].sort(),
    size: (name) => sizes.get(name) ?? 0,
    read: (name) => fs.readFile(pathOf(name)),
    stream: async (name) => createReadStream(pathOf(name)),
    extract: (name, target) => writeHashed(createReadStream(pathOf(name)), target),
    close: () => {},
  };
}
