import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import sharp from 'sharp';
import { setupOwner } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

/** Debian's Chromium; .ci/install-chromium.sh installs it. In CI the test must run, never skip. */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const skip =
  !fs.existsSync(CHROMIUM) && !process.env.CI
    ? `${CHROMIUM} is missing: run .ci/install-chromium.sh as root to enable the screenshot test`
    : false;

const VIEWPORTS = {
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
  desktop: { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 },
};

describe('GET /s/:token in headless Chromium (D-SHARE-1)', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let pageUrl: string;

  before(async () => {
    server = await startServer();
    const owner = await setupOwner(server.url);
    const note = await owner.post('/api/notes', {
      title: 'Weekend at the lake',
      color: 'sage',
      checklistMode: true,
      content: [
        'Packing list for Saturday — directions at https://example.com/lake.',
        '',
        '- [x] Tent and sleeping bags',
        '- [x] Sun cream',
        '- [ ] Camera batteries',
        '- [ ] Snacks for the road',
      ].join('\n'),
    });
    for (const [index, background] of ['#e76f51', '#2a9d8f', '#264653'].entries()) {
      const bytes = await sharp({ create: { width: 640, height: 420, channels: 3, background } })
        .jpeg()
        .toBuffer();
      const body = new FormData();
      body.append('file', new Blob([bytes], { type: 'image/jpeg' }), `photo-${index + 1}.jpg`);
      const uploaded = await owner.request('POST', `/api/notes/${note.body.id}/attachments`, { body });
      assert.equal(uploaded.status, 201, uploaded.text);
    }
    pageUrl = (await owner.post(`/api/notes/${note.body.id}/share`)).body.url;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  for (const [name, options] of Object.entries(VIEWPORTS)) {
    it(`renders the title and the checklist on a ${name}, with nothing blocked by the CSP`, async (t) => {
      const context = await browser.newContext(options);
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        // The browser's own favicon request is not the page's doing.
        if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico'))
          problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));

      const response = await page.goto(pageUrl);
      assert.equal(response?.status(), 200);
      assert.equal(await page.locator('h1').textContent(), 'Weekend at the lake');
      const boxes = page.locator('ul.checklist input[type=checkbox]');
      assert.equal(await boxes.count(), 4);
      for (const box of await boxes.all()) assert.equal(await box.isDisabled(), true);
      assert.deepEqual(
        await boxes.evaluateAll((inputs) => inputs.map((input) => (input as { checked: boolean }).checked)),
        [true, true, false, false],
      );
      assert.equal(await page.locator('.checklist li').first().textContent(), 'Tent and sleeping bags');
      // The stylesheet applied (its CSP hash matched): the note carries its color.
      const background = await page
        .locator('main')
        .evaluate((main) => (globalThis as any).getComputedStyle(main).backgroundColor);
      assert.equal(background, 'rgb(180, 221, 211)');
      // Thumbnails come from the public attachment endpoint, allowed by img-src 'self'.
      const images = page.locator('.images img');
      assert.equal(await images.count(), 3);
      await page.waitForLoadState('load');
      const loaded = await images.evaluateAll((imgs) =>
        imgs.map((img) => (img as { complete: boolean; naturalWidth: number }).naturalWidth > 0),
      );
      assert.deepEqual(loaded, [true, true, true]);
      assert.match(
        (await images.first().getAttribute('src'))!,
        /^\/api\/shared\/[\w-]{43}\/attachment\/[\w-]+\?thumb=1$/,
      );
      assert.deepEqual(problems, []);

      const file = path.join(os.tmpdir(), `share-page-${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      assert.ok(fs.statSync(file).size > 0);
      t.diagnostic(`screenshot: ${file}`);
      await context.close();
    });
  }
});
