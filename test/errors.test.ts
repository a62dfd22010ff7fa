import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_CODES, errorCodesMarkdownTable } from '../src/errors.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('the error catalogue (D-ERR-1)', () => {
  it('is the table in docs/api.md, so every code a client can get is documented', () => {
    const docs = readFileSync('docs/api.md', 'utf8');
    assert.ok(
      docs.includes(errorCodesMarkdownTable()),
      'docs/api.md must contain errorCodesMarkdownTable(): run npm run docs:tables',
    );
  });

  it('is closed: errors are made only by the factories in src/errors.ts', () => {
    const offenders = sourceFiles('src')
      .filter((file) => file !== path.join('src', 'errors.ts'))
      .filter((file) => /new AppError\(/.test(readFileSync(file, 'utf8')));
    assert.deepEqual(offenders, []);
  });

  it('gives every code a real HTTP error status and a snake_case name', () => {
    for (const [code, [status]] of Object.entries(ERROR_CODES)) {
      assert.match(code, /^[a-z]+(_[a-z]+)*$/, code);
      assert.ok(status >= 400 && STATUS_CODES[status] !== undefined, `${code}: ${status}`);
    }
  });
});
