/**
 * Shared computers (issue 26 item 9), from the operator's side in Debian's Chromium: a session
 * the server ends shows nothing of its user's notes until they sign in again; another person
 * signing in on the same browser removes the previous user's data but their unsynced changes,
 * which stay hidden and reach the server when their owner signs in again.
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import type { ServerNote } from '../web/src/sync/index.js';
import {
  card,
  compose,
  eventually,
  focus,
  signedInContext,
  skipWithoutChromium as skip,
  useBrowser,
} from './helpers/browser.js';
import { addUser, OWNER_PASSWORD, signIn, TestClient } from './helpers/client.js';
import { useOwner, useServer } from './helpers/server.js';

const browser = useBrowser();

const ADA_PASSWORD = 'analytical engine';
const ENDED = /session on this device has ended/;

/** What the browser holds: IndexedDB databases with their store sizes, and keepsake:* keys. */
function deviceContents(page: Page) {
  return page.evaluate(async () => {
    const databases: Record<string, Record<string, number>> = {};
    for (const { name } of await indexedDB.databases()) {
      if (!name?.startsWith('keepsake-')) continue;
      // Deleted since it was listed: opening it would make it anew (empty), so that is undone.
      const db = await new Promise<IDBDatabase | null>((resolve, reject) => {
        const request = indexedDB.open(name);
        request.onupgradeneeded = () => request.transaction?.abort();
        request.onsuccess = () => resolve(request.result);
        request.onerror = () =>
          request.error?.name === 'AbortError' ? resolve(null) : reject(request.error);
      });
      if (!db) continue;
      const counts: Record<string, number> = {};
      for (const store of db.objectStoreNames) {
        counts[store] = await new Promise<number>((resolve) => {
          const request = db.transaction(store).objectStore(store).count();
          request.onsuccess = () => resolve(request.result);
        });
      }
      db.close();
      databases[name] = counts;
    }
    const keys = Object.keys(localStorage).filter((key) => key.startsWith('keepsake:'));
    return { databases, keys, text: document.body.innerText };
  });
}

/** Ends the browser's own session on the server, as signing out on another device would. */
async function endSessionOf(context: BrowserContext, url: string): Promise<void> {
  const client = new TestClient(url);
  const session = (await context.cookies(url)).find((cookie) => cookie.name === 'session');
  assert.ok(session);
  client.cookies.set('session', session.value);
  assert.equal((await client.post('/api/auth/logout')).status, 200);
}

async function endedScreen(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByText(ENDED).waitFor();
  await page.getByRole('button', { name: "Remove this account's data from this device" }).waitFor();
}

describe('a shared computer', { skip }, () => {
  const server = useServer();
  const owner = useOwner(server, {
    overSocket: true,
    displayName: 'Grace Hopper',
    email: 'grace@example.com',
  });
  let ada: TestClient;
  let adaId: string;
  let graceId: string;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    graceId = String((await owner.get('/api/auth/status')).body.user.id);
    adaId = String(await addUser(owner, 'ada@example.com', ADA_PASSWORD, 'Ada Lovelace'));
    assert.equal((await owner.post('/api/notes', { content: "Grace's plans" })).status, 201);
    ada = await signIn(server.url, 'ada@example.com', ADA_PASSWORD);
    context = await signedInContext(browser, ada);
    page = await context.newPage();
  });
  after(() => context?.close());

  it('a session the server ended shows none of its notes, online or offline, and says what waits', async () => {
    await page.goto(server.url);
    await compose(page, "Ada's diary");
    await eventually(async () => assert.equal(await page.getByRole('status').textContent(), 'All saved'));
    await context.setOffline(true);
    await compose(page, 'Ada unsynced');
    await page.close();
    await context.setOffline(false);
    // Signed out elsewhere (the same as an expiry or a new password: the session is gone).
    assert.equal((await ada.post('/api/auth/logout')).status, 200);

    page = await context.newPage();
    await endedScreen(page, server.url);
    await page.getByText(/Changes to 1 note have not reached the server yet/).waitFor();
    const shown = await deviceContents(page);
    assert.doesNotMatch(shown.text, /Ada's diary|Ada unsynced/);
    assert.equal(await page.getByRole('article').count(), 0);
    const file = path.join(os.tmpdir(), 'web-session-ended-390.png');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: file });

    // Offline now: the notes still do not show (the device remembers the session ended).
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.reload();
    await eventually(async () =>
      assert.ok(
        await page.evaluate(() => navigator.serviceWorker.controller !== null),
        'the service worker controls the page',
      ),
    );
    await context.setOffline(true);
    await page.reload();
    await page.getByText(ENDED).waitFor();
    assert.equal(await page.getByRole('article').count(), 0);
    await context.setOffline(false);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("another person signs in: Ada's data goes but her unsynced change, which they never see", async () => {
    await page.getByLabel('Password').fill(OWNER_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await card(page, "Grace's plans").waitFor();
    const held = await deviceContents(page);
    assert.doesNotMatch(held.text, /Ada's diary|Ada unsynced/);
    // Ada's notes database keeps only her outbox; her images database (nothing queued) is gone.
    assert.deepEqual(held.databases[`keepsake-u${adaId}`], { acks: 0, meta: 0, notes: 0, outbox: 1 });
    assert.equal(held.databases[`keepsake-media-u${adaId}`], undefined);
    assert.ok(!held.keys.some((key) => key.includes(adaId)), JSON.stringify(held.keys));
    const profile = await page.evaluate(() => localStorage.getItem('keepsake:profile'));
    assert.match(profile ?? '', /grace@example.com/);
  });

  it('Ada signs in again: her unsynced change shows and reaches the server, with her other notes', async () => {
    // A new password, set from another device, ends Grace's session in this browser.
    const changed = await owner.post('/api/auth/password', {
      currentPassword: OWNER_PASSWORD,
      newPassword: 'a brand new secret',
    });
    assert.equal(changed.status, 200);
    await endedScreen(page, server.url);
    assert.doesNotMatch((await deviceContents(page)).text, /Grace's plans/);
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password').fill(ADA_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await card(page, 'Ada unsynced').waitFor();
    await card(page, "Ada's diary").waitFor();
    assert.equal(await card(page, "Grace's plans").count(), 0);
    const again = await signIn(server.url, 'ada@example.com', ADA_PASSWORD);
    await eventually(async () => {
      const notes = (await again.get<ServerNote[]>('/api/notes')).body;
      assert.deepEqual(notes.map((note) => note.content).sort(), ['Ada unsynced', "Ada's diary"]);
    });
    // Grace's data went when Ada signed in (she had nothing unsynced).
    const names = Object.keys((await deviceContents(page)).databases);
    assert.ok(!names.some((name) => name.endsWith(`-u${graceId}`)), names.join());
  });

  it('"Remove this account\'s data from this device" removes it all, unsynced changes too', async () => {
    await context.setOffline(true);
    await compose(page, 'Lost on purpose');
    await endSessionOf(context, server.url);
    // Back online, the app finds its session gone: the open notes leave the screen at once.
    await context.setOffline(false);
    await focus(page);
    await page.getByText(ENDED).waitFor();
    assert.equal(await page.getByRole('article').count(), 0);
    await page.getByRole('button', { name: "Remove this account's data from this device" }).click();
    const confirm = page.getByRole('alertdialog', { name: "Remove this account's data?" });
    await confirm.getByText(/will be lost/).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    assert.ok((await deviceContents(page)).databases[`keepsake-u${adaId}`]);
    await page.getByRole('button', { name: "Remove this account's data from this device" }).click();
    await confirm.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await eventually(async () => {
      const left = await deviceContents(page);
      assert.deepEqual(left.databases, {});
      assert.deepEqual(left.keys, []);
    });
    assert.equal(await page.getByText(ENDED).count(), 0);
  });
});
