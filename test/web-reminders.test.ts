/**
 * Reminders in the web app (issue 29): the "Remind me" picker on a card, the chip, the Reminders
 * view, a reminder set offline that syncs, and the in-app notice when a reminder falls due while
 * the app is open, in Debian's Chromium against the real server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { eventually, signedInPage, skipWithoutChromium as skip, useBrowser } from './helpers/browser.js';
import type { TestClient } from './helpers/client.js';
import { useOwner, useServer } from './helpers/server.js';

const browser = useBrowser();

const ZONE = 'Europe/Berlin';
/**
 * The user's notes on the server, read while the page is asked about (the app's sync waits for
 * animation frames, which a headless page only draws while something looks at it).
 */
async function serverNotes(page: Page, client: TestClient): Promise<{ title: string; reminder: any }[]> {
  await page.getByRole('status').first().textContent();
  return (await client.get('/api/notes')).body;
}

/** The wall-clock date and time in Berlin of an instant, as "yyyy-mm-dd hh:mm". */
const berlin = (iso: string) =>
  new Intl.DateTimeFormat('sv-SE', { timeZone: ZONE, dateStyle: 'short', timeStyle: 'short' }).format(
    new Date(iso),
  );

describe('reminders in the web app', { skip }, () => {
  const server = useServer();
  const owner = useOwner(server, { overSocket: true });
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    await owner.post('/api/notes', { title: 'Call the dentist' });
    await owner.post('/api/notes', { title: 'Water the plants' });
    ({ context, page } = await signedInPage(browser, owner, { timezoneId: ZONE, locale: 'en-GB' }));
    await page.getByRole('status').getByText('All saved').waitFor();
  });
  after(() => context?.close());

  const card = (title: string) => page.getByRole('article', { name: title });

  it('sets a reminder from the card’s "Remind me" picker, shown as a chip that opens the picker', async () => {
    await card('Call the dentist').hover();
    await card('Call the dentist').getByRole('button', { name: 'Remind me' }).click();
    const picker = page.getByRole('dialog', { name: 'Remind me' });
    for (const name of ['Later today', 'Tomorrow', 'Next week', 'Pick date & time']) {
      await picker.getByRole('button', { name }).waitFor();
    }
    await picker.getByRole('combobox', { name: 'Repeat' }).selectOption('weekly');
    await page.screenshot({ path: '.tmp/web-reminders-picker.png' });
    await picker.getByRole('button', { name: 'Tomorrow' }).click();
    await picker.waitFor({ state: 'detached' });

    const chip = card('Call the dentist').getByRole('button', { name: /^Tomorrow, 08:00/ });
    await chip.waitFor();

    const stored = await eventually(async () => {
      const notes = await serverNotes(page, owner);
      const reminder = notes.find((note) => note.title === 'Call the dentist')!.reminder;
      assert.ok(reminder, 'the reminder is there');
      return reminder;
    });
    assert.equal(stored.repeat, 'weekly');
    assert.equal(stored.timeZone, ZONE);
    const tomorrow = new Date(Date.now() + 24 * 3600_000);
    assert.equal(berlin(stored.at), `${berlin(tomorrow.toISOString()).slice(0, 10)} 08:00`);

    await chip.click();
    await page
      .getByRole('dialog', { name: 'Remind me' })
      .getByRole('button', { name: 'Remove reminder' })
      .waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog', { name: 'Remind me' }).waitFor({ state: 'detached' });
  });

  it('lists notes with a reminder in the Reminders view', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reminders' }).click();
    await card('Call the dentist').waitFor();
    assert.equal(await card('Water the plants').count(), 0);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notes' }).click();
    await card('Water the plants').waitFor();
  });

  it('sets a reminder offline, and it syncs once back online', async () => {
    await context.setOffline(true);
    await card('Water the plants').hover();
    await card('Water the plants').getByRole('button', { name: 'Remind me' }).click();
    const picker = page.getByRole('dialog', { name: 'Remind me' });
    await picker.getByRole('button', { name: 'Pick date & time' }).click();
    await picker.getByLabel('Date and time').fill('2031-03-04T09:30');
    await picker.getByRole('button', { name: 'Save' }).click();
    // Shown at once, offline: the edit is in the outbox.
    await card('Water the plants')
      .getByRole('button', { name: /^Tue, 4 Mar 2031, 09:30/ })
      .waitFor();
    await page.screenshot({ path: '.tmp/web-reminders-offline.png' });
    await context.setOffline(false);
    const reminder = await eventually(async () => {
      const notes = await serverNotes(page, owner);
      const found = notes.find((note) => note.title === 'Water the plants')!.reminder;
      assert.ok(found, 'found');
      return found;
    }, 30_000);
    assert.equal(berlin(reminder.at), '2031-03-04 09:30');
  });

  it('shows a notice naming the note when a reminder falls due while the app is open', async () => {
    const at = new Date(Date.now() + 6_000).toISOString();
    await owner.post('/api/notes', { title: 'Take the cake out', reminder: { at } });
    await page.reload();
    await card('Take the cake out').waitFor();
    const notice = page.getByRole('alert').filter({ hasText: 'Take the cake out' });
    await notice.waitFor({ timeout: 20_000 });
    assert.ok(Date.now() >= Date.parse(at), 'not before it is due');
    // Rung: the chip is struck through.
    await eventually(async () =>
      assert.equal(await card('Take the cake out').locator('.reminder-chip s').count(), 1),
    );
    await page.screenshot({ path: '.tmp/web-reminders-notice.png' });
    await notice.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('dialog', { name: /Take the cake out/ }).waitFor();
  });
});
