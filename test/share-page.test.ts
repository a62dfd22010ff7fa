import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { skipWithoutChromium as skip, useBrowser } from './helpers/browser.js';
import { setupOwner } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

/** A screenshot's pixels (RGB), to check what a person would see rather than that a file exists. */
interface Pixels {
  data: Buffer;
  width: number;
  scale: number;
}
type Box = { x: number; y: number; width: number; height: number };
type Rgb = [number, number, number];

async function readScreenshot(file: string, scale: number): Promise<Pixels> {
  const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, scale };
}

/** The share of pixels inside `box` (CSS pixels) within `tolerance` of `color` on every channel. */
function shareOf(pixels: Pixels, box: Box, color: Rgb, tolerance = 40): number {
  const [left, top] = [Math.round(box.x * pixels.scale), Math.round(box.y * pixels.scale)];
  const [width, height] = [Math.round(box.width * pixels.scale), Math.round(box.height * pixels.scale)];
  let matching = 0;
  for (let y = top; y < top + height; y++) {
    for (let x = left; x < left + width; x++) {
      const offset = (y * pixels.width + x) * 3;
      if (color.every((channel, i) => Math.abs(pixels.data[offset + i]! - channel) <= tolerance)) matching++;
    }
  }
  return matching / (width * height);
}

const TEXT: Rgb = [0x20, 0x21, 0x24];
const SAGE: Rgb = [180, 221, 211];
const PHOTOS: Rgb[] = [
  [0xe7, 0x6f, 0x51],
  [0x2a, 0x9d, 0x8f],
  [0x26, 0x46, 0x53],
];

const VIEWPORTS = {
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
  desktop: { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 },
};

describe('GET /s/:token in headless Chromium (D-SHARE-1)', { skip }, () => {
  let server: TestServer;
  const browser = useBrowser({ webApp: false });
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
    for (const [index, [r, g, b]] of PHOTOS.entries()) {
      const bytes = await sharp({ create: { width: 640, height: 420, channels: 3, background: { r, g, b } } })
        .jpeg()
        .toBuffer();
      const body = new FormData();
      body.append('file', new Blob([bytes], { type: 'image/jpeg' }), `photo-${index + 1}.jpg`);
      const uploaded = await owner.request('POST', `/api/notes/${note.body.id}/attachments`, { body });
      assert.equal(uploaded.status, 201, uploaded.text);
    }
    pageUrl = (await owner.post(`/api/notes/${note.body.id}/share`)).body.url;
  });
  after(() => server?.close());

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
      // The thumbnails load lazily, so the page's load event may come before the last one starts:
      // wait until every image has either loaded or failed, then check that none failed.
      await page.waitForFunction(() =>
        Array.from((globalThis as any).document.querySelectorAll('.images img')).every(
          (img) => (img as { complete: boolean }).complete,
        ),
      );
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
      t.diagnostic(`screenshot: ${file}`);
      const pixels = await readScreenshot(file, options.deviceScaleFactor);
      const boxOf = async (locator: ReturnType<typeof page.locator>) => (await locator.boundingBox())!;
      // The note card is drawn in its color: this is the note, not an error or notice page.
      const card = await boxOf(page.locator('main'));
      assert.ok(shareOf(pixels, card, SAGE, 6) > 0.4, 'the card is not sage green');
      // The title is dark text on the card: some pixels are text, most are still card.
      const title = await boxOf(page.locator('h1'));
      const ink = shareOf(pixels, title, TEXT);
      assert.ok(ink > 0.05 && ink < 0.6, `title area has ${ink} text pixels`);
      // Inside its border a ticked box is filled dark, an empty one is light.
      const inside = ({ x, y, width, height }: Box): Box => ({
        x: x + width / 4,
        y: y + height / 4,
        width: width / 2,
        height: height / 2,
      });
      const ticked = shareOf(pixels, inside(await boxOf(boxes.first())), TEXT, 90);
      const empty = shareOf(pixels, inside(await boxOf(boxes.last())), TEXT, 90);
      assert.ok(ticked > 0.4, `ticked box is ${ticked} dark inside`);
      assert.ok(empty < 0.1, `empty box is ${empty} dark inside`);
      // Each thumbnail shows its photo's color.
      for (const [index, color] of PHOTOS.entries()) {
        const share = shareOf(pixels, await boxOf(images.nth(index)), color, 12);
        assert.ok(share > 0.8, `thumbnail ${index + 1} is ${share} its color`);
      }
      await context.close();
    });
  }
});
