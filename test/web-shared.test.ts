import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

describe('src/shared', () => {
  it('holds only code a browser can run: no node: modules, nothing from the server outside it', () => {
    const folder = 'src/shared';
    for (const file of fs.readdirSync(folder)) {
      const source = fs.readFileSync(path.join(folder, file), 'utf8');
      for (const [, specifier] of source.matchAll(/^\s*(?:import|export)\b[^'"]*from\s+'([^']+)'/gm)) {
        assert.doesNotMatch(specifier!, /^node:|^\.\.\//, `${file} imports ${specifier}`);
      }
    }
  });
});
