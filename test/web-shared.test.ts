import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

describe('src/shared', () => {
  it('holds only code a browser can run: no node: modules, nothing from the server outside it', () => {
    const folder = path.resolve('src/shared');
    for (const file of fs.readdirSync(folder, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue;
      const source = fs.readFileSync(path.join(folder, file), 'utf8');
      for (const [, specifier] of source.matchAll(/^\s*(?:import|export)\b[^'"]*from\s+'([^']+)'/gm)) {
        assert.doesNotMatch(specifier!, /^node:/, `${file} imports ${specifier}`);
        if (!specifier!.startsWith('.')) continue;
        const target = path.resolve(folder, path.dirname(file), specifier!);
        assert.ok(target.startsWith(folder + path.sep), `${file} imports ${specifier}`);
      }
    }
  });
});
