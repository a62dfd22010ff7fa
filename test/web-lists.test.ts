/**
 * Lists like Keep's and reordering by touch (issue 30 items 8 and 9), in Debian's Chromium on a
 * desktop and a phone (390×844, touch through Chromium's touch input): list items move by keys
 * and by their drag handle, skipping ticked items and keeping the caret; Enter, Backspace and
 * Tab/Shift+Tab; sub-items stored as indentation; a long press then a drag moves a card.
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, CDPSession, Locator, Page } from 'playwright-core';
import { LONG_PRESS_MS } from '../web/src/app/longPress.js';
import type { ServerNote } from '../web/src/sync/index.js';
import {
  card,
  eventually,
  mouseDrag,
  signedInContext,
  skipWithoutChromium as skip,
  useBrowser,
} from './helpers/browser.js';
import { useOwner, useServer } from './helpers/server.js';

const browser = useBrowser();

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const screenshot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(os.tmpdir(), `web-lists-${name}.png`) });
/** The middle of `target`, once it is on screen (a card moving to another column is built again). */
const centre = async (target: Locator) => {
  const box = await eventually(async () => {
    const measured = await target.boundingBox();
    assert.ok(measured, 'on screen');
    return measured;
  });
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
};

/**
 * A finger: down on `from`, resting `holdMs`, then moved in steps onto `to` and lifted. The touch
 * is not waited for: the rest is the browser's time, however busy the page. With `busy`, the
 * page's main thread is held from the touch until 300 ms after a long press is due (a busy phone):
 * its timers then run late, when the first move has already been made.
 */
async function touchDrag(
  page: Page,
  from: Locator,
  to: Locator,
  holdMs: number,
  { busy = false } = {},
): Promise<void> {
  const start = await centre(from);
  // Measuring waits for the page: a swipe's path and a busy page's are measured before the touch.
  let end = busy || holdMs === 0 ? await centre(to) : undefined;
  if (busy) {
    // Once the touch has reached the card and the drag library (the window hears it last).
    await page.evaluate((ms) => {
      addEventListener(
        'pointerdown',
        () => {
          const stop = performance.now() + ms;
          while (performance.now() < stop);
        },
        { once: true },
      );
    }, LONG_PRESS_MS + 300);
  }
  const cdp: CDPSession = await page.context().newCDPSession(page);
  const touched = cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [start] });
  await page.waitForTimeout(holdMs);
  // Where the target is once the hold has done its work (a long press selects the card).
  end ??= await centre(to);
  for (let step = 1; step <= 12; step++) {
    const point = {
      x: start.x + ((end.x - start.x) * step) / 12,
      y: start.y + ((end.y - start.y) * step) / 12,
    };
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [point] });
    await page.waitForTimeout(40);
  }
  await page.waitForTimeout(150);
  await page.screenshot({ path: path.join(os.tmpdir(), `web-lists-touch-drag-${holdMs}.png`) });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await touched;
  await cdp.detach();
}

/** The text field of the list item holding `text`, and its row (values are properties, not attributes). */
async function listItem(editor: Locator, text: string): Promise<{ field: Locator; row: Locator }> {
  const fields = editor.locator('.item-text');
  const values = await fields.evaluateAll((elements) =>
    elements.map((element) => (element as HTMLInputElement).value),
  );
  const index = values.indexOf(text);
  assert.ok(index >= 0, `no item "${text}" in ${JSON.stringify(values)}`);
  return { field: fields.nth(index), row: editor.locator('.checklist li').nth(index) };
}

/** The focused element's value (the list item the caret is in). */
const focusedValue = (page: Page) =>
  page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value ?? null);

describe('lists like Keep, reordering by touch', { skip }, () => {
  const server = useServer();
  const owner = useOwner(server, { overSocket: true });
  let desktop: BrowserContext;
  let phone: BrowserContext;

  const noteNamed = async (title: string) =>
    (await owner.get<ServerNote[]>('/api/notes?filter=all')).body.find((note) => note.title === title)!;
  /** The server's order of the three cards the touch tests move. */
  const order = async () =>
    (await owner.get<ServerNote[]>('/api/notes')).body
      .filter((note) => ['Left', 'Middle', 'Right'].includes(note.title))
      .sort((a, b) => a.sortOrder - b.sortOrder)
      .map((note) => note.title);
  const create = async (fields: Record<string, unknown>) => {
    const created = await owner.post<ServerNote>('/api/notes', fields);
    assert.equal(created.status, 201, created.text);
    return created.body;
  };

  before(async () => {
    await create({
      title: 'Groceries',
      content: '- [ ] milk\n- [x] bread\n- [ ] eggs\n- [ ] tea',
      checklistMode: true,
    });
    await create({
      title: 'Packing',
      content: '- [ ] socks\n- [ ] shirts\n- [ ] shoes',
      checklistMode: true,
    });
    for (const title of ['Right', 'Middle', 'Left']) await create({ title, content: `${title} note` });
    desktop = await signedInContext(browser, owner);
    phone = await signedInContext(browser, owner, PHONE);
  });
  after(async () => {
    await desktop?.close();
    await phone?.close();
  });

  it('9. keys move items past ticked ones with the caret; Enter, Tab, Backspace; a handle drags', async () => {
    const page = await desktop.newPage();
    await page.goto(server.url);
    await card(page, 'Groceries').getByRole('heading').click();
    const editor = page.getByRole('dialog', { name: 'Groceries' });
    const item = async (text: string) => (await listItem(editor, text)).field;
    await (await item('milk')).focus();
    await page.keyboard.press('Alt+ArrowDown');
    // Past eggs (the next open item); bread is ticked, under Completed, and stays on its line.
    await eventually(async () =>
      assert.equal((await noteNamed('Groceries')).content, '- [ ] eggs\n- [x] bread\n- [ ] milk\n- [ ] tea'),
    );
    assert.equal(await focusedValue(page), 'milk');
    await page.keyboard.press('Alt+ArrowUp');
    await page.keyboard.press('Alt+ArrowUp');
    assert.equal(await focusedValue(page), 'milk');

    // Enter at the caret splits the item; Tab makes the new one a sub-item.
    await (await item('eggs')).click();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    assert.equal(await focusedValue(page), '');
    await page.keyboard.type('free range');
    await page.keyboard.press('Tab');
    assert.equal(await focusedValue(page), 'free range');
    await eventually(async () =>
      assert.equal(
        (await noteNamed('Groceries')).content,
        '- [ ] milk\n- [x] bread\n- [ ] eggs\n  - [ ] free range\n- [ ] tea',
      ),
    );
    await screenshot(page, 'sub-item-1280');
    // Moving an item takes its sub-items along.
    await (await item('eggs')).focus();
    await page.keyboard.press('Alt+ArrowUp');
    await eventually(async () =>
      assert.equal(
        (await noteNamed('Groceries')).content,
        '- [ ] eggs\n- [x] bread\n  - [ ] free range\n- [ ] milk\n- [ ] tea',
      ),
    );
    // Backspace at the start: a sub-item comes back out, then an empty item goes.
    await (await item('free range')).focus();
    await page.keyboard.press('Home');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+End');
    await page.keyboard.press('Delete');
    await page.keyboard.press('Backspace');
    assert.equal(await focusedValue(page), 'eggs');
    await eventually(async () =>
      assert.equal((await noteNamed('Groceries')).content, '- [ ] eggs\n- [x] bread\n- [ ] milk\n- [ ] tea'),
    );

    // The handle drags with the mouse: tea onto eggs (moving up: before it).
    const handle = async (text: string) => (await listItem(editor, text)).row.locator('.drag-handle');
    await (await item('tea')).hover();
    const from = await centre(await handle('tea'));
    const to = await centre(await item('eggs'));
    await mouseDrag(page, from, to, () => screenshot(page, 'item-drag-1280'));
    await eventually(async () =>
      assert.equal((await noteNamed('Groceries')).content, '- [ ] tea\n- [x] bread\n- [ ] eggs\n- [ ] milk'),
    );
    await page.close();
  });

  it('9. on a phone the handle drags an item by touch at once', async () => {
    const page = await phone.newPage();
    await page.goto(server.url);
    await card(page, 'Packing').getByRole('heading').tap();
    const editor = page.getByRole('dialog', { name: 'Packing' });
    await editor.locator('.item-text').first().waitFor();
    const row = async (text: string) => (await listItem(editor, text)).row;
    assert.ok((await (await row('shoes')).locator('.drag-handle').boundingBox())!.height >= 44);
    await screenshot(page, 'list-390');
    await touchDrag(page, (await row('socks')).locator('.drag-handle'), await row('shoes'), 0);
    await eventually(async () =>
      assert.equal((await noteNamed('Packing')).content, '- [ ] shirts\n- [ ] shoes\n- [ ] socks'),
    );
    await page.close();
  });

  it('8. a long press then a drag moves a card by touch; a quick swipe scrolls instead', async () => {
    const page = await phone.newPage();
    await page.goto(server.url);
    await card(page, 'Left').waitFor();
    // The first sync's answer may still move cards between columns.
    await page.getByRole('status').getByText('All saved').waitFor({ state: 'attached' });
    assert.deepEqual(await order(), ['Left', 'Middle', 'Right']);
    // Without resting first it is not a drag.
    await touchDrag(page, card(page, 'Left'), card(page, 'Right'), 0);
    await page.waitForTimeout(500);
    assert.deepEqual(await order(), ['Left', 'Middle', 'Right']);

    await touchDrag(page, card(page, 'Left'), card(page, 'Right'), 700);
    await eventually(async () => assert.deepEqual(await order(), ['Middle', 'Right', 'Left']));
    await screenshot(page, 'card-moved-390');
    // The page shows the new order too (in one column, the page's order is the display order).
    await page.getByRole('button', { name: 'Clear selection' }).tap();
    await page.getByRole('button', { name: 'List view' }).tap();
    const titles = await page.locator('article .card-title').allTextContents();
    assert.deepEqual(
      titles.filter((title) => ['Left', 'Middle', 'Right'].includes(title)),
      ['Middle', 'Right', 'Left'],
    );
    await page.close();
  });

  it('8b. on a busy phone, a swipe is still a scroll and a long press still picks the card up', async () => {
    const page = await phone.newPage();
    await page.goto(server.url);
    await card(page, 'Middle').waitFor();
    await page.getByRole('status').getByText('All saved').waitFor({ state: 'attached' });
    const selected = () => page.locator('article.selected').count();
    // The swipe had moved on before the long press was due, though the page saw its moves late.
    await touchDrag(page, card(page, 'Middle'), card(page, 'Left'), 0, { busy: true });
    await page.waitForTimeout(500);
    assert.equal(await selected(), 0, 'a swipe selects nothing');
    assert.deepEqual(await order(), ['Middle', 'Right', 'Left']);
    // The finger had rested long enough before the first move, though the page saw the move late.
    await touchDrag(page, card(page, 'Middle'), card(page, 'Left'), LONG_PRESS_MS + 200, { busy: true });
    await eventually(async () => assert.deepEqual(await order(), ['Right', 'Left', 'Middle']));
    assert.equal(await selected(), 1, 'the long press selected the card');
    await screenshot(page, 'busy-card-moved-390');
    await page.close();
  });
});
