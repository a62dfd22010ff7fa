/**
 * axe-core finds no serious or critical violation in the main views, light and dark (issue 30
 * item 12): the notes grid with a card of every colour, the open editor, archive, trash,
 * settings, sign-in and a share page (which follows dark mode too).
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { NOTE_COLORS } from '../src/shared/colors.js';
import {
  seriousViolations,
  signedInPage,
  skipWithoutChromium as skip,
  useBrowser,
} from './helpers/browser.js';
import { useOwner, useServer } from './helpers/server.js';

const browser = useBrowser();

const SCHEMES = ['light', 'dark'] as const;
const screenshot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(os.tmpdir(), `web-accessibility-${name}.png`) });

/** Every view in both themes: the violations found, by view and theme (none expected). */
async function violationsIn(page: Page, view: string, out: Record<string, unknown>): Promise<void> {
  const headings = await page.getByRole('heading', { level: 1 }).count();
  if (headings !== 1) out[`${view}: <h1> elements`] = headings;
  for (const scheme of SCHEMES) {
    await page.emulateMedia({ colorScheme: scheme });
    const found = await seriousViolations(page);
    if (found.length > 0) out[`${view} ${scheme}`] = found;
  }
}

describe('no serious axe violation in the main views, light and dark', { skip }, () => {
  const server = useServer();
  const owner = useOwner(server, { overSocket: true });
  let shareToken: string;

  before(async () => {
    // Secondary text on every colour: a ticked item, a label chip, the "Edited" line.
    for (const color of NOTE_COLORS)
      await owner.post('/api/notes', {
        title: `A ${color} note`,
        content: `- [ ] to do\n- [x] done #errand`,
        checklistMode: true,
        color,
      });
    const archived = await owner.post('/api/notes', { title: 'Archived', content: 'old', color: 'sage' });
    await owner.patch(`/api/notes/${archived.body.id}`, { archived: true });
    const trashed = await owner.post('/api/notes', { title: 'Trashed', content: 'gone', color: 'fog' });
    await owner.patch(`/api/notes/${trashed.body.id}`, { trashed: true });
    const shared = await owner.post('/api/notes', {
      title: 'Shared',
      content: 'Read this\n- [x] ticked\n- [ ] open',
      color: 'peach',
    });
    shareToken = (await owner.post(`/api/notes/${shared.body.id}/share`)).body.token;
  });

  it('the signed-in views: grid, editor, archive, trash, settings', async () => {
    const { context, page } = await signedInPage(browser, owner, { bypassCSP: true });
    const found: Record<string, unknown> = {};
    await page.getByRole('article', { name: 'A peach note' }).waitFor();
    await violationsIn(page, 'grid', found);
    await page.emulateMedia({ colorScheme: 'light' });
    await screenshot(page, 'grid-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'grid-dark');
    await page.getByRole('article', { name: 'A sage note' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).waitFor();
    await violationsIn(page, 'editor', found);
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    for (const [link, title] of [
      ['Archive', 'Archived'],
      ['Trash', 'Trashed'],
    ] as const) {
      await page.getByRole('link', { name: link }).click();
      await page.getByRole('article', { name: title }).waitFor();
      await violationsIn(page, link.toLowerCase(), found);
    }
    await page.goto(`${server.url}/settings`);
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    await violationsIn(page, 'settings', found);
    assert.deepEqual(found, {});
    await context.close();
  });

  it('the sign-in page and a share page (which turns dark with the system)', async () => {
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const found: Record<string, unknown> = {};
    await page.goto(server.url);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await violationsIn(page, 'sign-in', found);

    await page.goto(`${server.url}/s/${shareToken}`);
    await page.getByRole('heading', { name: 'Shared', level: 1 }).waitFor();
    await violationsIn(page, 'share', found);
    assert.deepEqual(found, {});
    // Dark: the page and the note both turn dark, the text light.
    const colors = () =>
      page.evaluate(() =>
        [document.body, document.querySelector('main')!].map((e) => getComputedStyle(e).backgroundColor),
      );
    await page.emulateMedia({ colorScheme: 'light' });
    const light = await colors();
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await colors();
    await screenshot(page, 'share-dark');
    const luminance = (rgb: string) =>
      rgb
        .match(/\d+/g)!
        .slice(0, 3)
        .reduce((sum, c) => sum + Number(c), 0);
    for (const index of [0, 1])
      assert.ok(luminance(dark[index]!) < luminance(light[index]!) / 2, `${light} → ${dark}`);
    await context.close();
  });
});
