import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';

// Tests run from the repository root (npm test runs them bundled elsewhere).
const ROOT = process.cwd();
const noAnalyzer =
  spawnSync('systemd-analyze', ['--version']).status !== 0 && 'systemd-analyze is not installed';

/** The unit file docs/deploy.md documents, as a person copies it. */
function documentedUnit(): string {
  const deploy = fs.readFileSync(path.join(ROOT, 'docs/deploy.md'), 'utf8');
  const unit = /```ini\n# \/etc\/systemd\/system\/notes\.service\n([\s\S]*?)```/.exec(deploy)?.[1];
  assert.ok(unit, 'docs/deploy.md has the notes.service unit');
  return unit;
}

describe("docs/deploy.md's systemd unit (docs/security.md)", () => {
  it('scores below 2 ("OK") in systemd-analyze security', { skip: noAnalyzer }, () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'notes-unit-'));
    try {
      const file = path.join(folder, 'notes.service');
      fs.writeFileSync(file, documentedUnit());
      const result = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', file], {
        encoding: 'utf8',
      });
      const score = /Overall exposure level for notes\.service: ([\d.]+)/.exec(result.stdout)?.[1];
      assert.ok(score, result.stdout + result.stderr);
      assert.ok(Number(score) < 2, `exposure ${score}`);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});
