/**
 * The grid of a large account (issue 30 item 16, decision 0041): a virtual masonry list keeps
 * only the cards near the screen in the page, in display order, laid out without overlaps, on a
 * desktop and a phone; the last note is reached by scrolling; search, opening a note, j/k, Tab
 * and find-in-page still work. In Debian's Chromium against the real server.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { eventually, signedInPage, skipWithoutChromium as skip, useBrowser } from './helpers/browser.js';
import type { TestClient } from './helpers/client.js';
import { useOwner, useServer } from './helpers/server.js';

const NOTES = 5_000;
const PINNED = 3;
/** Far more than a screen of cards, far fewer than the account's: 5,000 cards are ~75,000. */
const MAX_ELEMENTS = 4_000;

const browser = useBrowser();

/** "Note 1" … "Note 5000" in display order (by sortOrder), the first three pinned, of varied length. */
async function seed(owner: TestClient): Promise<void> {
  const words = 'milk bread lisbon tram pastel nata harbour tile river light'.split(' ');
  for (let start = 1; start <= NOTES; start += 1_000) {
    const changes = Array.from({ length: Math.min(1_000, NOTES - start + 1) }, (_, offset) => {
      const n = start + offset;
      const lines = Array.from({ length: 1 + (n % 7) }, (_, line) =>
        Array.from(
          { length: 2 + ((n * 7 + line * 3) % 13) },
          (_, word) => words[(n + line + word) % 10],
        ).join(' '),
      );
      return {
        noteId: randomUUID(),
        operation: 'create',
        timestamp: Date.now(),
        data: {
          title: `Note ${n}`,
          content: `${lines.join('\n')}\nmarker${n}x`,
          sortOrder: n,
          pinned: n <= PINNED,
          checklistMode: n % 11 === 0,
        },
      };
    });
    const pushed = await owner.post('/api/sync', { changes });
    assert.equal(pushed.status, 200, pushed.text.slice(0, 300));
  }
}

interface Card {
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The cards in the page, in the page's order, with their boxes (in the viewport's coordinates). */
function cardsInPage(page: Page): Promise<Card[]> {
  return page.getByRole('article').evaluateAll((articles) =>
    articles.map((article) => {
      const box = article.getBoundingClientRect();
      return {
        name: article.getAttribute('aria-label')!,
        x: box.x,
        y: box.y,
        width: box.width,
        height: box.height,
      };
    }),
  );
}

const elementCount = (page: Page) => page.evaluate(() => document.getElementsByTagName('*').length);
const numberOf = (card: Card) => Number(card.name.replace('Note ', ''));

/** No two cards of one section overlap, and the page holds them in display order. */
function assertLaidOut(cards: Card[], context: string): void {
  const numbers = cards.map(numberOf);
  assert.deepEqual(
    numbers,
    [...numbers].sort((a, b) => a - b),
    `${context}: display order`,
  );
  for (const [i, a] of cards.entries()) {
    for (const b of cards.slice(i + 1)) {
      const overlap =
        a.x < b.x + b.width - 1 &&
        b.x < a.x + a.width - 1 &&
        a.y < b.y + b.height - 1 &&
        b.y < a.y + a.height - 1;
      assert.ok(
        !overlap,
        `${context}: ${a.name} ${JSON.stringify(a)} overlaps ${b.name} ${JSON.stringify(b)}`,
      );
    }
  }
}

/** Scrolls to the end of the page until the last note's card is on screen (the end grows as cards are measured). */
async function scrollToTheEnd(page: Page): Promise<void> {
  await eventually(async () => {
    await page.evaluate(() =>
      window.scrollTo({ top: document.documentElement.scrollHeight, behavior: 'instant' }),
    );
    const last = page.getByRole('article', { name: `Note ${NOTES}`, exact: true });
    assert.equal(await last.count(), 1, 'the last card is in the page');
    const box = (await last.boundingBox())!;
    const viewport = page.viewportSize()!;
    assert.ok(box.y >= 0 && box.y + box.height <= viewport.height + 1, `on screen: ${JSON.stringify(box)}`);
    // Scrolling has settled: the page's end is where the window is.
    assert.ok(
      await page.evaluate(
        () => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1,
      ),
    );
  }, 60_000);
}

/**
 * Run in the page (as a string: a function would be renamed by the test build): a log of focus
 * moves (focusin, and focusout with where the focus went) and of the last focused card's node
 * taken out of the page (or moved), as `window.focusLog`.
 */
const FOCUS_LOG = `(() => {
  const log = [];
  window.focusLog = log;
  let card = null;
  const label = (node) => node instanceof Element
    ? node.tagName + (node.tagName === 'ARTICLE' ? '' : '"' + (node.getAttribute('aria-label') ?? '') + '"') + ':' + (node.closest('article')?.getAttribute('aria-label') ?? '')
    : String(node);
  document.addEventListener('focusin', (event) => {
    log.push('in ' + label(event.target));
    card = event.target.closest?.('article')?.getAttribute('aria-label') ?? card;
  }, true);
  document.addEventListener('focusout', (event) => log.push('out ' + label(event.target) + ' to ' + label(event.relatedTarget)), true);
  new MutationObserver((records) => {
    for (const record of records)
      for (const node of record.removedNodes)
        if (card && node instanceof Element && node.querySelector('article[aria-label="' + card + '"]'))
          log.push('taken out: ' + card + ' (focus on ' + label(document.activeElement) + ')');
  }).observe(document.body, { childList: true, subtree: true });
})()`;

describe(`a ${NOTES.toLocaleString('en-US')}-note account: only the cards near the screen are in the page`, {
  skip,
}, () => {
  const server = useServer();
  const owner = useOwner(server, { overSocket: true });

  before(async () => {
    await seed(owner);
  });

  async function openApp(viewport: { width: number; height: number }, hasTouch = false) {
    const { context, page } = await signedInPage(browser, owner, { viewport, hasTouch, isMobile: hasTouch });
    await page.getByRole('article', { name: 'Note 1', exact: true }).waitFor({ timeout: 60_000 });
    await page.getByRole('status').getByText('All saved').waitFor({ timeout: 120_000 });
    return { context, page };
  }

  /** Scrolls halfway down (as the wheel or the scrollbar would), until the middle of the list is rendered. */
  async function scrollToTheMiddle(page: Page, alsoCheck: (cards: Card[]) => void = () => {}) {
    await page.evaluate(() =>
      window.scrollTo({ top: document.documentElement.scrollHeight / 2, behavior: 'instant' }),
    );
    await eventually(async () => {
      const cards = await cardsInPage(page);
      assert.ok(
        cards.some((card) => numberOf(card) > 2_000),
        'the middle of the list is rendered',
      );
      alsoCheck(cards);
    });
  }

  it('on a desktop: a bounded page, laid out in columns, down to the last note; search and open still work', async () => {
    const { context, page } = await openApp({ width: 1280, height: 800 });
    // Every note read: a search finds the last one.
    await page.getByRole('searchbox', { name: 'Search' }).fill(`marker${NOTES}x`);
    await page.getByRole('article', { name: `Note ${NOTES}`, exact: true }).waitFor({ timeout: 60_000 });
    await page.getByRole('searchbox', { name: 'Search' }).fill('');
    await page.getByRole('article', { name: 'Note 4', exact: true }).waitFor();

    const top = await cardsInPage(page);
    assert.ok(top.length < 100, `${top.length} cards at the top`);
    assert.ok((await elementCount(page)) < MAX_ELEMENTS, `${await elementCount(page)} elements at the top`);
    const others = top.filter((card) => numberOf(card) > PINNED);
    assertLaidOut(others, 'top');
    // Keep's columns: the first notes fill the top row left to right.
    const firstRow = others.slice(0, 4);
    assert.equal(new Set(firstRow.map((card) => Math.round(card.x))).size, 4, 'four columns');
    assert.deepEqual(
      firstRow.map((card) => card.x),
      [...firstRow.map((card) => card.x)].sort((a, b) => a - b),
    );
    await page.screenshot({ path: path.join(os.tmpdir(), 'web-grid-desktop-top.png') });

    // Halfway, and at the end: the cards there, still a bounded page.
    await page.evaluate(() =>
      window.scrollTo({ top: document.documentElement.scrollHeight / 2, behavior: 'instant' }),
    );
    await eventually(async () => {
      const middle = await cardsInPage(page);
      assert.ok(
        middle.some((card) => numberOf(card) > 2_000 && card.y > 0 && card.y < 800),
        'cards halfway',
      );
      assert.equal(middle.filter((card) => numberOf(card) === 4).length, 0, 'the first cards have left');
    });
    await scrollToTheEnd(page);
    const end = await cardsInPage(page);
    assert.ok(end.length < 100, `${end.length} cards at the end`);
    assert.ok((await elementCount(page)) < MAX_ELEMENTS, `${await elementCount(page)} elements at the end`);
    assertLaidOut(
      end.filter((card) => numberOf(card) > PINNED),
      'end',
    );
    await page.screenshot({ path: path.join(os.tmpdir(), 'web-grid-desktop-end.png') });
    // Find in page searches the page's rendered text: the cards on screen are in it.
    assert.ok(await page.evaluate((text) => document.body.innerText.includes(text), `marker${NOTES}x`));

    // A note found by search opens, and closing it gives its card the focus back.
    const search = page.getByRole('searchbox', { name: 'Search' });
    await search.fill('marker2345x');
    const found = page.getByRole('article', { name: 'Note 2345', exact: true });
    await found.click();
    const dialog = page.getByRole('dialog', { name: 'Note 2345' });
    assert.match(await dialog.getByRole('textbox', { name: 'Note' }).inputValue(), /marker2345x$/);
    await dialog.getByRole('button', { name: 'Close' }).click();
    await eventually(async () =>
      assert.equal(
        await page.evaluate(() => document.activeElement?.getAttribute('aria-label')),
        'Note 2345',
      ),
    );
    await context.close();
  });

  it('keeps the focused card in the page when it scrolls away, so j/k and Tab go on from it', async () => {
    const { context, page } = await openApp({ width: 1280, height: 800 });
    const focusedName = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? null);
    await page.getByRole('article', { name: 'Note 10', exact: true }).focus();
    // Scrolled far away (the wheel, the scrollbar): focus stays on the card, which stays in the page.
    await scrollToTheMiddle(page, (cards) => assert.ok(cards.some((card) => card.name === 'Note 10')));
    assert.equal(await focusedName(), 'Note 10');
    // What the focus does from here, for the message should this fail: CI has seen the Tabs
    // begin at Note 1, the focus fallen to <body> somewhere between j and the first Tab.
    await page.evaluate(FOCUS_LOG);
    // j: the next note, brought back on screen.
    await page.keyboard.press('j');
    await eventually(async () => assert.equal(await focusedName(), 'Note 11'));
    const box = (await page.getByRole('article', { name: 'Note 11', exact: true }).boundingBox())!;
    assert.ok(box.y >= 0 && box.y < 800, `Note 11 on screen: ${JSON.stringify(box)}`);

    // Tab from card to card (through each card's buttons) goes on past the first screen, in order.
    const reached: string[] = [];
    for (let press = 0; press < 600 && reached.length < 30; press++) {
      await page.keyboard.press('Tab');
      const name = await page.evaluate(() =>
        document.activeElement?.tagName === 'ARTICLE'
          ? document.activeElement.getAttribute('aria-label')
          : null,
      );
      if (name && name !== reached.at(-1)) {
        reached.push(name);
        const card = (await page.getByRole('article', { name, exact: true }).boundingBox())!;
        assert.ok(
          card.y >= 0 && card.y + card.height <= 801,
          `${name} scrolled into view: ${JSON.stringify(card)}`,
        );
      }
    }
    const expected = Array.from({ length: 30 }, (_, index) => `Note ${12 + index}`);
    if (reached.join() !== expected.join()) {
      const log = (await page.evaluate('window.focusLog.slice(0, 40).join(" | ")')) as string;
      assert.fail(`Tab reached ${reached.slice(0, 5).join(', ')}…, not Note 12, 13…; the focus: ${log}`);
    }
    assert.ok((await elementCount(page)) < MAX_ELEMENTS);
    await context.close();
  });

  it('keeps the card being dragged in the page while the drag scrolls it away', async () => {
    // By touch, which gives a card no focus (the focused card is kept anyway).
    const { context, page } = await openApp({ width: 390, height: 844 }, true);
    const isIn = async () => (await cardsInPage(page)).some((card) => card.name === 'Note 5');
    const card = page.getByRole('article', { name: 'Note 5', exact: true });
    await card.scrollIntoViewIfNeeded();
    const box = (await card.boundingBox())!;
    const finger = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    const cdp = await context.newCDPSession(page);
    // A long press picks it up; it moves a little, then the page scrolls under it (the
    // auto-scroller, the other hand) to the middle of the list.
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [finger] });
    await page.waitForTimeout(800);
    for (const step of [4, 8, 12, 16, 20]) {
      await cdp.send('Input.dispatchTouchEvent', {
        type: 'touchMove',
        touchPoints: [{ x: finger.x + step, y: finger.y + step }],
      });
      await page.waitForTimeout(40);
    }
    await page.screenshot({ path: path.join(os.tmpdir(), 'web-grid-touch-drag-390.png') });
    await eventually(async () =>
      assert.equal(await page.locator('.dragging').getAttribute('aria-label'), 'Note 5'),
    );
    await scrollToTheMiddle(page);
    assert.ok(await isIn(), 'the dragged card is still in the page');
    // Cancelled (the order is unchanged): not dragged any more, it leaves the page like the others.
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchCancel', touchPoints: [] });
    await eventually(async () => assert.equal(await isIn(), false, 'Note 5 has left'));
    await context.close();
  });

  it('on a phone: two columns, a bounded page, down to the last note', async () => {
    const { context, page } = await openApp({ width: 390, height: 844 });
    const top = await cardsInPage(page);
    const others = top.filter((card) => numberOf(card) > PINNED);
    assertLaidOut(others, 'phone top');
    assert.equal(new Set(others.map((card) => Math.round(card.x))).size, 2, 'two columns');
    for (const card of others) assert.ok(card.x >= 0 && card.x + card.width <= 390, JSON.stringify(card));
    await page.screenshot({ path: path.join(os.tmpdir(), 'web-grid-phone-top.png') });
    await scrollToTheEnd(page);
    const end = await cardsInPage(page);
    assert.ok(end.length < 60, `${end.length} cards at the end`);
    assert.ok((await elementCount(page)) < MAX_ELEMENTS);
    assertLaidOut(
      end.filter((card) => numberOf(card) > PINNED),
      'phone end',
    );
    await page.screenshot({ path: path.join(os.tmpdir(), 'web-grid-phone-end.png') });
    await context.close();
  });
});
