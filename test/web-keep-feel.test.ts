/**
 * "As good as Keep in the hand" (issue 30), in Debian's Chromium on a phone (390×844, touch) and
 * a desktop: nothing is lost by one tap (confirmations, Sign out in the account menu, a list
 * item's text opens the note), Back closes an open note, touch-sized checkboxes, an editor that
 * grows with its text, and focus that never falls to <body>.
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import type { ServerNote } from '../web/src/sync/index.js';
import {
  card,
  eventually,
  focus,
  signedInContext,
  signedInPage,
  skipWithoutChromium as skip,
  useBrowser,
} from './helpers/browser.js';
import { OWNER_PASSWORD, setupOwner, TestClient } from './helpers/client.js';
import { useOwner, useServer } from './helpers/server.js';
import { holdLocalDatabase } from './web-local-database.js';

const browser = useBrowser();

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const ESSAY = Array.from({ length: 5000 }, (_, index) => (index % 12 === 11 ? 'word.\n' : 'word')).join(' ');

const screenshot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(os.tmpdir(), `web-keep-feel-${name}.png`) });

/** A long press by touch, through Chromium's touch input (what a finger sends). */
async function longPress(page: Page, target: ReturnType<Page['locator']>): Promise<void> {
  const box = (await target.boundingBox())!;
  const point = { x: box.x + box.width / 2, y: box.y + Math.min(24, box.height / 2) };
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [point] });
  await page.waitForTimeout(800);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
}

/** The accessible name and tag of the focused element ("BODY" when focus fell to the page). */
const focusedElement = (page: Page) =>
  page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    return { tag: element?.tagName ?? '', name: element?.getAttribute('aria-label') ?? '' };
  });

describe('as good as Keep in the hand', { skip }, () => {
  const server = useServer();
  const owner = useOwner(server, { overSocket: true });
  let desktop: BrowserContext;
  let phone: BrowserContext;
  let page: Page;
  let phonePage: Page;

  const serverNotes = async (filter = 'all') =>
    (await owner.get<ServerNote[]>(`/api/notes?filter=${filter}`)).body;
  const create = async (fields: Record<string, unknown>) => {
    const created = await owner.post<ServerNote>('/api/notes', fields);
    assert.equal(created.status, 201, created.text);
    return created.body;
  };

  before(async () => {
    await create({ title: 'Groceries', content: '- [ ] milk\n- [ ] bread', checklistMode: true });
    await create({ title: 'Essay', content: ESSAY });
    await create({ title: 'Short', content: 'Two words' });
    for (const title of ['Left', 'Middle', 'Right']) await create({ title, content: `${title} note` });
    await create({ title: 'Große Straße', content: 'Walk there #travel' });
    for (const title of ['Old', 'Older']) {
      const note = await create({ title, content: 'gone soon' });
      await owner.patch(`/api/notes/${note.id}`, { trashed: true });
    }
    desktop = await signedInContext(browser, owner, { permissions: ['clipboard-read', 'clipboard-write'] });
    phone = await signedInContext(browser, owner, PHONE);
    page = await desktop.newPage();
    phonePage = await phone.newPage();
    for (const each of [page, phonePage]) {
      await each.goto(server.url);
      await card(each, 'Groceries').waitFor();
    }
  });
  after(async () => {
    await desktop?.close();
    await phone?.close();
  });

  it('1. Delete forever and Empty trash ask first; Cancel keeps the notes', async () => {
    await phonePage.getByRole('button', { name: 'Main menu' }).tap();
    await phonePage.getByRole('link', { name: 'Trash' }).tap();
    // By touch the cards have no buttons: a long press selects, the top bar acts (item 7).
    const topBar = phonePage.getByRole('banner');
    await longPress(phonePage, card(phonePage, 'Old'));
    await topBar.getByText('1 selected').waitFor();
    await topBar.getByRole('button', { name: 'Delete forever' }).tap();
    const ask = phonePage.getByRole('alertdialog', { name: 'Delete note forever?' });
    await ask.waitFor();
    await screenshot(phonePage, 'delete-forever-390');
    await ask.getByRole('button', { name: 'Cancel' }).tap();
    await card(phonePage, 'Old').waitFor();
    assert.equal((await serverNotes('trashed')).length, 2);

    await topBar.getByRole('button', { name: 'Delete forever' }).tap();
    await ask.getByRole('button', { name: 'Delete forever' }).tap();
    await eventually(async () => assert.equal(await card(phonePage, 'Old').count(), 0));
    await eventually(async () =>
      assert.deepEqual(
        (await serverNotes('trashed')).map((n) => n.title),
        ['Older'],
      ),
    );

    await phonePage.getByRole('button', { name: 'Empty trash' }).tap();
    const empty = phonePage.getByRole('alertdialog', { name: 'Empty trash?' });
    await empty.getByText('The note in Trash will be deleted forever.').waitFor();
    await empty.getByRole('button', { name: 'Cancel' }).tap();
    assert.equal((await serverNotes('trashed')).length, 1);
    await phonePage.getByRole('button', { name: 'Empty trash' }).tap();
    await empty.getByRole('button', { name: 'Empty trash' }).tap();
    await eventually(async () => assert.deepEqual(await serverNotes('trashed'), []));
    await phonePage.getByRole('button', { name: 'Main menu' }).tap();
    await phonePage.getByRole('link', { name: 'Notes' }).tap();
    await card(phonePage, 'Groceries').waitFor();
  });

  it('7. by touch, cards show no buttons; the open note and a long-press selection have them', async () => {
    const left = card(phonePage, 'Left');
    await left.waitFor();
    for (const name of ['Select note', 'Pin', 'Background options', 'Archive', 'Delete'])
      assert.equal(await left.getByRole('button', { name }).isVisible(), false, name);
    await longPress(phonePage, left);
    const topBar = phonePage.getByRole('banner');
    await topBar.getByText('1 selected').waitFor();
    // While selecting, a tap adds a card to the selection instead of opening it.
    await card(phonePage, 'Right').tap();
    await topBar.getByText('2 selected').waitFor();
    assert.equal(await phonePage.getByRole('dialog').count(), 0);
    await screenshot(phonePage, 'selected-390');
    await topBar.getByRole('button', { name: 'Clear selection' }).tap();
    await left.tap();
    const editor = phonePage.getByRole('dialog', { name: 'Left' });
    for (const name of ['Pin', 'Background options', 'Archive', 'Delete'])
      assert.ok(await editor.getByRole('button', { name }).isVisible(), name);
    await editor.getByRole('button', { name: 'Close' }).tap();
    await editor.waitFor({ state: 'detached' });
    // With a mouse the buttons are there (on pointing), as before.
    await card(page, 'Left').hover();
    assert.ok(await card(page, 'Left').getByRole('button', { name: 'Archive' }).isVisible());
  });

  it('2. Sign out is in the account menu, not the top bar, and asks first', async () => {
    for (const each of [page, phonePage]) {
      assert.equal(await each.getByRole('banner').getByRole('button', { name: 'Sign out' }).count(), 0);
      await each.getByRole('button', { name: 'Account' }).click();
      await each.getByRole('menu', { name: 'Account' }).getByText('Owner').waitFor();
      if (each === phonePage) await screenshot(each, 'account-menu-390');
      await each.getByRole('menuitem', { name: 'Sign out' }).click();
      const ask = each.getByRole('alertdialog', { name: 'Sign out?' });
      await ask.getByText(/copy of your notes is removed/).waitFor();
      await ask.getByRole('button', { name: 'Cancel' }).click();
      await card(each, 'Groceries').waitFor();
    }
  });

  it('3. a list item on a card: its text opens the note, only its box ticks', async () => {
    for (const [each, tap] of [
      [phonePage, true],
      [page, false],
    ] as const) {
      const groceries = card(each, 'Groceries');
      const text = groceries.getByText('milk', { exact: true });
      await (tap ? text.tap() : text.click());
      const editor = each.getByRole('dialog', { name: 'Groceries' });
      await editor.waitFor();
      assert.equal(await editor.getByRole('checkbox', { name: 'milk' }).isChecked(), false);
      await editor.getByRole('button', { name: 'Close' }).click();
      await editor.waitFor({ state: 'detached' });
    }
    assert.equal(
      (await serverNotes()).find((note) => note.title === 'Groceries')?.content,
      '- [ ] milk\n- [ ] bread',
    );
    await card(phonePage, 'Groceries').getByRole('checkbox', { name: 'bread' }).tap();
    await eventually(async () =>
      assert.equal(
        (await serverNotes()).find((note) => note.title === 'Groceries')?.content,
        '- [ ] milk\n- [x] bread',
      ),
    );
    assert.equal(await phonePage.getByRole('dialog').count(), 0, 'ticking does not open the note');
  });

  it('4. Back closes the open note and leaves the view behind it as it was', async () => {
    await phonePage.getByRole('button', { name: 'Main menu' }).tap();
    await phonePage.getByRole('link', { name: 'Archive' }).tap();
    await phonePage.getByRole('button', { name: 'Main menu' }).tap();
    await phonePage.getByRole('link', { name: 'Notes' }).tap();
    await card(phonePage, 'Short').tap();
    await phonePage.getByRole('dialog', { name: 'Short' }).waitFor();
    await phonePage.goBack();
    await phonePage.getByRole('dialog').waitFor({ state: 'detached' });
    assert.equal(new URL(phonePage.url()).pathname, '/');
    await card(phonePage, 'Short').waitFor();
    // Closed by its button, the note leaves no entry behind: Back goes to the view before.
    await card(phonePage, 'Short').tap();
    await phonePage.getByRole('dialog', { name: 'Short' }).getByRole('button', { name: 'Close' }).tap();
    await phonePage.getByRole('dialog').waitFor({ state: 'detached' });
    await phonePage.goBack();
    await eventually(() => assert.equal(new URL(phonePage.url()).pathname, '/archive'));
    await phonePage.getByText('Your archived notes appear here').waitFor();
    await phonePage.goForward();
    await card(phonePage, 'Short').waitFor();
  });

  it('5. on a phone, checkboxes are at least 24 px in rows of at least 44 px', async () => {
    const box = card(phonePage, 'Groceries').getByRole('checkbox', { name: 'milk' });
    const size = (await box.boundingBox())!;
    assert.ok(size.width >= 24 && size.height >= 24, JSON.stringify(size));
    const row = (await box.locator('xpath=..').boundingBox())!;
    assert.ok(row.height >= 44, JSON.stringify(row));
    await screenshot(phonePage, 'grid-390');
    await card(phonePage, 'Groceries').getByText('milk', { exact: true }).tap();
    const editor = phonePage.getByRole('dialog', { name: 'Groceries' });
    for (const name of ['milk', 'bread']) {
      const inEditor = (await editor.getByRole('checkbox', { name }).boundingBox())!;
      assert.ok(inEditor.width >= 24 && inEditor.height >= 24, `${name}: ${JSON.stringify(inEditor)}`);
    }
    await editor.getByRole('button', { name: 'Close' }).tap();
    await editor.waitFor({ state: 'detached' });
  });

  it('6. the editor grows with its text: a long note scrolls the dialog, not a box', async () => {
    await card(page, 'Essay').click();
    const editor = page.getByRole('dialog', { name: 'Essay' });
    const text = editor.getByRole('textbox', { name: 'Note' });
    const sizes = () =>
      text.evaluate((element) => ({
        box: element.clientHeight,
        text: element.scrollHeight,
        dialog: element.closest('dialog')!.clientHeight,
        dialogContent: element.closest('dialog')!.scrollHeight,
      }));
    const long = await sizes();
    assert.ok(long.text <= long.box + 1, `the box holds all its text: ${JSON.stringify(long)}`);
    assert.ok(long.dialogContent > long.dialog * 3, `the dialog scrolls: ${JSON.stringify(long)}`);
    // The toolbar stays at hand at the bottom of the scrolled dialog.
    await editor.getByRole('button', { name: 'Close' }).click();
    await editor.waitFor({ state: 'detached' });

    // On a phone a short note's text fills the screen down to the toolbar.
    await card(phonePage, 'Short').tap();
    const phoneEditor = phonePage.getByRole('dialog', { name: 'Short' });
    const textBox = (await phoneEditor.getByRole('textbox', { name: 'Note' }).boundingBox())!;
    const toolbar = (await phoneEditor.getByRole('button', { name: 'Close' }).boundingBox())!;
    assert.ok(textBox.y + textBox.height >= toolbar.y - 60, JSON.stringify({ textBox, toolbar }));
    await screenshot(phonePage, 'editor-390');
    await phoneEditor.getByRole('button', { name: 'Close' }).tap();
    await phoneEditor.waitFor({ state: 'detached' });

    // The composer grows while typing, too.
    const composer = page.getByRole('textbox', { name: 'Take a note…' });
    await composer.click();
    await composer.fill(Array.from({ length: 30 }, (_, index) => `line ${index}`).join('\n'));
    const grown = await composer.evaluate((element) => [element.clientHeight, element.scrollHeight]);
    assert.ok(grown[0]! >= 30 * 16 && grown[1]! <= grown[0]! + 1, JSON.stringify(grown));
    await composer.fill('');
    await page.getByRole('button', { name: 'Close' }).click();
  });

  it('11. focus goes back to the card (or its neighbour), never to <body>; Ctrl+Z undoes', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await card(page, 'Middle').focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Middle' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await eventually(async () =>
      assert.deepEqual(await focusedElement(page), { tag: 'ARTICLE', name: 'Middle' }),
    );

    // Its node taken out and put back in one step (the virtual grid moves cards while it scrolls):
    // the browser drops the focus of a moved node; the card gets it back.
    await card(page, 'Middle').evaluate((article) =>
      article.parentNode!.insertBefore(article, article.nextSibling),
    );
    await eventually(async () =>
      assert.deepEqual(await focusedElement(page), { tag: 'ARTICLE', name: 'Middle' }),
    );

    // Its focus dropped by the browser without a pointer (as a re-render can): it comes back.
    await card(page, 'Middle').evaluate((article) => (article as HTMLElement).blur());
    await eventually(async () =>
      assert.deepEqual(await focusedElement(page), { tag: 'ARTICLE', name: 'Middle' }),
    );

    // Pinned: the card moves into another section and keeps the focus.
    await page.keyboard.press('f');
    await page.getByRole('heading', { name: 'Pinned' }).waitFor();
    await eventually(async () =>
      assert.deepEqual(await focusedElement(page), { tag: 'ARTICLE', name: 'Middle' }),
    );
    await page.keyboard.press('f');
    await page.getByRole('heading', { name: 'Pinned' }).waitFor({ state: 'detached' });
    await eventually(async () =>
      assert.deepEqual(await focusedElement(page), { tag: 'ARTICLE', name: 'Middle' }),
    );

    // Coloured from its card: the palette closes, the card keeps the focus.
    await card(page, 'Middle').getByRole('button', { name: 'Background options' }).click();
    await card(page, 'Middle').getByRole('button', { name: 'Sage', exact: true }).click();
    await eventually(async () =>
      assert.deepEqual(await focusedElement(page), { tag: 'ARTICLE', name: 'Middle' }),
    );

    // Archived: the card leaves, its neighbour takes the focus; Ctrl+Z brings the note back.
    await page.keyboard.press('e');
    await eventually(async () => assert.equal(await card(page, 'Middle').count(), 0));
    await eventually(async () => {
      const now = await focusedElement(page);
      assert.equal(now.tag, 'ARTICLE');
      assert.notEqual(now.name, 'Middle');
    });
    await page.keyboard.press('Control+z');
    await card(page, 'Middle').waitFor();
    await eventually(async () =>
      assert.equal((await serverNotes()).find((note) => note.title === 'Middle')?.archived, false),
    );

    // Trashed from the open editor: focus goes to a neighbour, not the page.
    await card(page, 'Right').click();
    // Undone before the device has written the change (its database busy): undone all the same.
    const letGo = await holdLocalDatabase(page);
    await page.getByRole('dialog', { name: 'Right' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await eventually(async () => assert.equal((await focusedElement(page)).tag, 'ARTICLE'));
    await page.keyboard.press('Control+z');
    await letGo();
    assert.equal(await card(page, 'Right').count(), 1);
  });

  it('14. Make a copy opens a copy of the open note; Copy to clipboard copies its text', async () => {
    await card(page, 'Short').click();
    const editor = page.getByRole('dialog', { name: 'Short' });
    await editor.waitFor({ timeout: 10_000 }).catch(async () => {
      // CI saw this dialog not open once (2026-11-27), after 11.'s undo: say what is open instead.
      const open = await page
        .getByRole('dialog')
        .evaluateAll((dialogs) =>
          dialogs.map((d) => d.getAttribute('aria-label') ?? d.textContent?.slice(0, 60)),
        );
      assert.fail(`the dialog of "Short" did not open; open dialogs: ${JSON.stringify(open)}`);
    });
    await editor.getByRole('textbox', { name: 'Note' }).fill('Two words, then three');
    await editor.getByRole('button', { name: 'Copy to clipboard' }).click();
    await page.getByText('Copied to clipboard').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'Short\n\nTwo words, then three');
    await editor.getByRole('button', { name: 'Make a copy' }).click();
    await page.getByText('Copy made').waitFor();
    await eventually(async () => {
      const shorts = (await serverNotes()).filter((note) => note.title === 'Short');
      assert.deepEqual(
        shorts.map((note) => note.content),
        ['Two words, then three', 'Two words, then three'],
      );
    });
    // The copy is the open note now: editing it leaves the original alone.
    await editor.getByRole('textbox', { name: 'Note' }).fill('Only the copy');
    await editor.getByRole('button', { name: 'Close' }).click();
    await eventually(async () => {
      const shorts = (await serverNotes()).filter((note) => note.title === 'Short');
      assert.deepEqual(shorts.map((note) => note.content).sort(), ['Only the copy', 'Two words, then three']);
    });
  });

  it('15. search folds ß/ss; its filters (types, labels, colours) show when the empty box is focused', async () => {
    const search = page.getByRole('searchbox', { name: 'Search' });
    await search.focus();
    const filters = page.getByRole('group', { name: 'Filters' });
    for (const name of ['Lists', 'Images', 'travel', 'Coral notes'])
      await filters.getByRole('button', { name, exact: true }).waitFor();
    await filters.getByRole('button', { name: 'travel', exact: true }).click();
    await eventually(async () => assert.equal(await page.getByRole('article').count(), 1));
    await card(page, 'Große Straße').waitFor();
    await filters.getByRole('button', { name: 'travel', exact: true }).click();
    await search.fill('grosse strasse');
    await eventually(async () => assert.equal(await page.getByRole('article').count(), 1));
    await card(page, 'Große Straße').waitFor();
    await search.press('Escape');
    await filters.waitFor({ state: 'detached' });
    await search.focus();
    await filters.waitFor();
    // A click on the page's background, just below the sticky top bar (which covers main's top).
    const main = await page.locator('main.content').boundingBox();
    const topbar = await page.locator('header.topbar').boundingBox();
    await page.mouse.click(main!.x + 5, Math.max(main!.y, topbar!.y + topbar!.height) + 5);
    await filters.waitFor({ state: 'detached' });
    // A click in the same frame as the focus, before the app has drawn the filters, closes them too.
    const openAfterClick = await search.evaluate(async (input) => {
      input.focus();
      document
        .querySelector('main.content')!
        .dispatchEvent(new PointerEvent('pointerdown', { bubbles: true }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      return document.querySelector('.filters') !== null;
    });
    assert.equal(openAfterClick, false);
  });

  it('small ones: a hashtag in the text is not repeated as a chip; a new note opens without a 404', async () => {
    const street = card(page, 'Große Straße');
    await street.getByText('Walk there #travel').waitFor();
    assert.equal(await street.getByRole('list', { name: 'Labels' }).count(), 0);
    await create({ title: 'Tagged below', content: 'Text without tags\n#travel' });
    await focus(page);
    await card(page, 'Tagged below').getByRole('list', { name: 'Labels' }).getByText('travel').waitFor();

    const failures: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
    });
    await page.getByRole('textbox', { name: 'Take a note…' }).click();
    await page.getByRole('textbox', { name: 'Take a note…' }).fill('Fresh from the composer');
    await page.getByRole('button', { name: 'Close' }).click();
    await card(page, 'Fresh from the composer').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await eventually(async () =>
      assert.ok(
        (await serverNotes()).some((note) => note.content === 'Fresh from the composer'),
        'the note is on the server',
      ),
    );
    assert.deepEqual(failures, []);
  });

  it('2. with changes waiting, Sign out says so and can wait for them to be saved', async () => {
    await phone.setOffline(true);
    await phonePage.getByRole('textbox', { name: 'Take a note…' }).tap();
    await phonePage.getByRole('textbox', { name: 'Take a note…' }).fill('Typed on the bus');
    await phonePage.getByRole('button', { name: 'Close' }).tap();
    await card(phonePage, 'Typed on the bus').waitFor();
    await phonePage.getByRole('button', { name: 'Account' }).tap();
    await phonePage.getByRole('menuitem', { name: 'Sign out' }).tap();
    const ask = phonePage.getByRole('alertdialog', { name: 'Sign out?' });
    await ask.getByText(/1 note has changes the server does not have yet/).waitFor();
    await ask.getByRole('button', { name: "Export this device's notes" }).waitFor();
    await ask.getByRole('button', { name: 'Sign out anyway' }).waitFor();
    await screenshot(phonePage, 'sign-out-waiting-390');
    await ask.getByRole('button', { name: 'Sign out when saved' }).tap();
    // Still signed in while the change waits.
    assert.equal(await phonePage.getByRole('button', { name: 'Sign in' }).count(), 0);
    await phone.setOffline(false);
    await phonePage.evaluate(() => window.dispatchEvent(new Event('online')));
    await phonePage.getByRole('button', { name: 'Sign in' }).waitFor();
    // The browsers shared the API client's session, which signing out ended.
    const again = new TestClient(server.url);
    assert.equal((await again.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
    const notes = (await again.get<ServerNote[]>('/api/notes')).body;
    assert.ok(notes.some((note) => note.content === 'Typed on the bus'));
  });
});

/** Dark pixels (text) in each line-high band of a screenshot of a card's text, top to bottom. */
async function inkPerLine(text: ReturnType<Page['locator']>): Promise<number[]> {
  const lineHeight = await text.evaluate((element) =>
    Number.parseFloat(getComputedStyle(element).lineHeight),
  );
  const { data, info } = await sharp(await text.screenshot())
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const scale = info.height / (await text.boundingBox())!.height;
  const bands: number[] = [];
  for (let top = 0; top + lineHeight * scale <= info.height + 1; top += lineHeight * scale) {
    let ink = 0;
    for (let y = Math.round(top); y < Math.min(info.height, Math.round(top + lineHeight * scale)); y++)
      for (let x = 0; x < info.width; x++) if (data[y * info.width + x]! < 128) ink++;
    bands.push(ink);
  }
  return bands;
}

describe("a long card's text ends in a fade, on a whole line (issue 30, small ones)", { skip }, () => {
  const server = useServer();

  it('a cut text fades out on its last lines; a short one does not', async () => {
    const owner = await setupOwner(server.url);
    const long = Array.from({ length: 40 }, (_, index) => `Line ${index} of the long note`).join('\n');
    await owner.post('/api/notes', { title: 'Long', content: long });
    await owner.post('/api/notes', { title: 'Brief', content: 'One\nTwo\nThree' });
    const context = await signedInContext(browser, owner);
    const page = await context.newPage();
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(server.url);
    const longText = card(page, 'Long').locator('.card-text');
    await longText.waitFor();
    await page.screenshot({ path: path.join(os.tmpdir(), 'web-keep-feel-card-fade.png') });
    const cut = await inkPerLine(longText);
    assert.equal(cut.length, 16, 'whole lines only');
    // Full ink up top, fading towards the bottom, nearly none on the last line.
    assert.ok(cut.at(-1)! < cut[0]! * 0.25, JSON.stringify(cut));
    assert.ok(cut.at(-2)! < cut[0]! * 0.9, JSON.stringify(cut));
    const brief = await inkPerLine(card(page, 'Brief').locator('.card-text'));
    assert.equal(brief.length, 3);
    assert.ok(brief.at(-1)! > brief[0]! * 0.6, `an uncut text does not fade: ${JSON.stringify(brief)}`);
    await context.close();
  });
});

describe('the open note\'s colours leave its "Edited" line readable (issue 30, small ones)', { skip }, () => {
  const server = useServer();

  it('the palette and the "Edited" line do not overlap, on a desktop and a phone', async () => {
    const owner = await setupOwner(server.url);
    await owner.post('/api/notes', { title: 'Painted', content: 'Some text\nand more' });
    for (const options of [{}, PHONE]) {
      const { context, page } = await signedInPage(browser, owner, options);
      await card(page, 'Painted').click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('button', { name: 'Background options' }).click();
      const palette = dialog.getByRole('group', { name: 'Colors' });
      await palette.getByRole('button', { name: 'Sage' }).waitFor();
      const edited = dialog.getByText(/^Edited /);
      const [a, b] = [(await palette.boundingBox())!, (await edited.boundingBox())!];
      const overlap =
        a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
      await page.screenshot({
        path: path.join(os.tmpdir(), `web-keep-feel-palette-${page.viewportSize()!.width}.png`),
      });
      assert.equal(overlap, false, `palette ${JSON.stringify(a)}, Edited ${JSON.stringify(b)}`);
      await palette.getByRole('button', { name: 'Sage' }).click();
      await eventually(async () =>
        assert.equal((await owner.get<ServerNote[]>('/api/notes')).body[0]!.color, 'sage'),
      );
      await context.close();
    }
  });
});

describe('List view: Pinned and Others head the column of cards (issue 30, small ones)', { skip }, () => {
  const server = useServer();

  it("each heading starts at its cards' left edge", async () => {
    const owner = await setupOwner(server.url);
    await owner.post('/api/notes', { title: 'Pinned one', content: 'up top', pinned: true });
    await owner.post('/api/notes', { title: 'Other one', content: 'below' });
    const { context, page } = await signedInPage(browser, owner);
    await card(page, 'Pinned one').waitFor();
    await page.getByRole('button', { name: 'List view' }).click();
    await page.getByRole('button', { name: 'Grid view' }).waitFor();
    for (const [heading, title] of [
      ['Pinned', 'Pinned one'],
      ['Others', 'Other one'],
    ] as const) {
      const text = (await page.getByRole('heading', { name: heading, level: 2 }).boundingBox())!;
      const cardBox = (await card(page, title).boundingBox())!;
      assert.ok(
        text.x >= cardBox.x && text.x <= cardBox.x + 16,
        `${heading} at ${text.x}, cards at ${cardBox.x}`,
      );
      assert.ok(
        Math.abs(text.x + text.width - (cardBox.x + cardBox.width)) <= 16,
        `${heading} spans the column`,
      );
    }
    await page.screenshot({ path: path.join(os.tmpdir(), 'web-keep-feel-list-headings.png') });
    await context.close();
  });
});
