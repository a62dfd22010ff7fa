/**
 * A node:test reporter that ends the run with one line per test file: its tests and the time
 * they took (the sum of its top-level suites and tests, which run one after another in the
 * file's own process; starting that process and loading the code come on top). Node 20's own
 * reporters print durations per suite and test but none per file. Slowest files first.
 */
import path from 'node:path';

export default async function* fileDurations(source) {
  const files = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (!file) continue;
    const entry = files.get(file) ?? { ms: 0, tests: 0, failed: 0 };
    if (nesting === 0) entry.ms += details.duration_ms;
    if (details.type !== 'suite') {
      entry.tests++;
      if (event.type === 'test:fail') entry.failed++;
    }
    files.set(file, entry);
  }
  const rows = [...files].sort(([, a], [, b]) => b.ms - a.ms);
  yield '\nTime per test file (tests only, not process start-up):\n';
  for (const [file, { ms, tests, failed }] of rows) {
    const name = path.basename(file).replace(/\.js$/, '.ts');
    const outcome = failed > 0 ? `${tests} tests, ${failed} failed` : `${tests} tests`;
    yield `${(ms / 1000).toFixed(2).padStart(7)} s  ${name.padEnd(32)} ${outcome}\n`;
  }
}
