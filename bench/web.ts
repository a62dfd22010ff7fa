/**
 * `npm run bench:web [-- --quick]`: the web app's numbers (issue 13, decision 0013), printed as a
 * table for docs/webapp.md: JS and CSS shipped (brotli), first full sync of the corpus to a
 * usable grid, a warm start (IndexedDB filled, service worker cached) to the first cards, and the
 * search latency per keystroke, all in headless Debian Chromium against the real server on
 * 127.0.0.1. Measures; asserts nothing about speed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { launchChromium } from '../test/helpers/browser.js';
import { TestClient } from '../test/helpers/client.js';
import { startServer } from '../test/helpers/server.js';
import { buildWebApp, WEB_BUNDLE } from '../test/helpers/webApp.js';
import { BENCH_PASSWORD, seedDataDir } from './seed.js';

const { values: args } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
const NOTES = args.quick ? 300 : 10_000;
const KEYSTROKES = 'lisbon quokka';

function brotliSizes(): { js: number; css: number } {
  const assets = path.join(WEB_BUNDLE, 'assets');
  const sum = (ext: string) =>
    fs
      .readdirSync(assets)
      .filter((file) => file.endsWith(`${ext}.br`))
      .reduce((total, file) => total + fs.statSync(path.join(assets, file)).size, 0);
  return { js: sum('.js'), css: sum('.css') };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

buildWebApp();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'notes-web-bench-'));
await seedDataDir(dataDir, { seed: 20261121, count: NOTES, mode: 'batched' });
const server = await startServer({ dataDir });
const browser = await launchChromium();
try {
  const owner = new TestClient(server.url);
  await owner.post('/api/auth/login', { password: BENCH_PASSWORD });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addCookies([{ name: 'session', value: owner.cookies.get('session')!, url: server.url }]);
  const page = await context.newPage();

  let started = Date.now();
  await page.goto(server.url);
  await page.getByRole('article').first().waitFor({ timeout: 120_000 });
  const firstSyncToCards = Date.now() - started;
  await page.getByRole('status').getByText('All saved').waitFor({ timeout: 120_000 });
  const firstSyncDone = Date.now() - started;
  await page.evaluate(() => navigator.serviceWorker.ready);

  // Warm: the notes are in IndexedDB and the shell in the service worker's cache.
  const warm: number[] = [];
  for (let run = 0; run < 3; run++) {
    started = Date.now();
    await page.reload();
    await page.getByRole('article').first().waitFor();
    warm.push(Date.now() - started);
  }

  // One keystroke at a time: from the key to the next frame painted with the results.
  const search = page.getByRole('searchbox', { name: 'Search' });
  await search.focus();
  const keystrokes: number[] = [];
  for (let round = 0; round < 3; round++) {
    await search.fill('');
    for (const key of KEYSTROKES) {
      const ms = await page.evaluate(
        (typed) =>
          new Promise<number>((resolve) => {
            const input = document.querySelector<HTMLInputElement>('input[type="search"]')!;
            const start = performance.now();
            input.value += typed;
            input.dispatchEvent(new Event('input', { bubbles: true }));
            requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - start)));
          }),
        key,
      );
      keystrokes.push(ms);
    }
  }

  const sizes = brotliSizes();
  const rows: [string, string, string][] = [
    ['JS shipped (brotli)', `${(sizes.js / 1024).toFixed(1)} KB`, '≤ 80 KB'],
    ['CSS shipped (brotli)', `${(sizes.css / 1024).toFixed(1)} KB`, '≤ 15 KB'],
    [`First sync of ${NOTES} notes: first cards`, `${firstSyncToCards} ms`, ''],
    [`First sync of ${NOTES} notes: all saved`, `${firstSyncDone} ms`, '≤ 5 s'],
    ['Warm start to first cards (median of 3)', `${percentile(warm, 50)} ms`, '≤ 500 ms'],
    [
      `Search per keystroke, p50 / p95 (${keystrokes.length} keys)`,
      `${percentile(keystrokes, 50).toFixed(1)} / ${percentile(keystrokes, 95).toFixed(1)} ms`,
      '≤ 16 ms p95',
    ],
  ];
  console.log(`| Web app, ${NOTES} notes, ${os.cpus().length} cores | Measured | Target |\n|---|---|---|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
} finally {
  await browser.close();
  await server.close();
}
