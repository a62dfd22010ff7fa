/**
 * The web app offline in Debian's Chromium (issue 13): Chromium finds it installable (manifest,
 * icons, a service worker controlling the page); the service worker starts it with the
 * network cut and with the server stopped; edits made meanwhile reach the server when it is back;
 * two browsers converge; plain http on a non-local name works online and says why offline cannot.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import type { ServerNote } from '../web/src/sync/index.js';
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  card,
  compose,
  eventually,
  focus,
  signedInPage,
  skipWithoutChromium as skip,
  useBrowser,
} from './helpers/browser.js';
import { OWNER_PASSWORD, setupOwner, TestClient } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

/** A name that resolves to loopback but is not "localhost": an insecure context on plain http. */
const LAN_NAME = 'notes.test';

const browser = useBrowser({ args: [`--host-resolver-rules=MAP ${LAN_NAME} 127.0.0.1`] });

/** Waits until the service worker has precached the shell and controls the page. */
async function controlledByWorker(page: Page): Promise<void> {
  await page.evaluate(() => navigator.serviceWorker.ready);
  await eventually(async () =>
    assert.ok(
      await page.evaluate(() => navigator.serviceWorker.controller !== null),
      'the service worker controls the page',
    ),
  );
}

describe('installable', { skip }, () => {
  let server: TestServer;
  let profile: string;
  let context: BrowserContext;
  before(async () => {
    server = await startServer();
    const owner = await setupOwner(server.url);
    // Chromium never offers to install from an incognito profile, which a plain context is.
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'notes-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
    });
    await context.addCookies([{ name: 'session', value: owner.cookies.get('session')!, url: server.url }]);
  });
  after(async () => {
    await context?.close();
    await server?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
  });

  it('Chromium reports no installability error, and the manifest has what installing needs', async () => {
    const page = await context.newPage();
    await page.goto(server.url);
    await page.getByRole('textbox', { name: 'Take a note…' }).waitFor();
    await controlledByWorker(page);
    const cdp = await context.newCDPSession(page);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    assert.deepEqual(installabilityErrors, []);
    const { errors, data } = await cdp.send('Page.getAppManifest');
    assert.deepEqual(errors, []);
    const manifest = JSON.parse(data!) as {
      name: string;
      start_url: string;
      display: string;
      icons: { sizes: string; purpose?: string }[];
    };
    assert.equal(manifest.name, 'Keepsake Notes');
    assert.equal(manifest.start_url, '/');
    assert.equal(manifest.display, 'standalone');
    for (const size of ['192x192', '512x512'])
      assert.ok(
        manifest.icons.some((icon) => icon.sizes === size && icon.purpose !== 'maskable'),
        size,
      );
    assert.ok(
      manifest.icons.some((icon) => icon.purpose?.split(' ').includes('maskable')),
      'a maskable icon',
    );
    await cdp.detach();
  });
});

describe('offline with a service worker', { skip }, () => {
  let server: TestServer;
  let owner: TestClient;
  let context: BrowserContext;
  let page: Page;
  const notes = async () => (await owner.get<ServerNote[]>('/api/notes')).body;
  const hasNote = async (text: string) =>
    assert.ok(
      (await notes()).some((note) => note.content === text),
      `the server has "${text}"`,
    );

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server.url);
    ({ context, page } = await signedInPage(browser, owner));
    await page.getByRole('textbox', { name: 'Take a note…' }).waitFor();
    await controlledByWorker(page);
  });
  after(async () => {
    await context?.close();
    await server?.close();
  });

  it('with the network cut: creates, searches, reloads, and syncs when the network is back', async () => {
    await compose(page, 'Written online');
    await eventually(() => hasNote('Written online'));
    await context.setOffline(true);
    await compose(page, 'Written offline');
    await page.getByRole('searchbox', { name: 'Search' }).fill('offline');
    await eventually(async () => assert.equal(await page.getByRole('article').count(), 1));
    await page.getByRole('searchbox', { name: 'Search' }).fill('');
    await eventually(async () =>
      assert.match((await page.getByRole('status').textContent())!, /1 change waiting/),
    );

    await page.reload();
    await card(page, 'Written offline').waitFor();
    await card(page, 'Written online').waitFor();
    await context.setOffline(false);
    await eventually(() => hasNote('Written offline'));
    await eventually(async () => assert.equal(await page.getByRole('status').textContent(), 'All saved'));
  });

  it('with the server stopped: starts from the cache, keeps edits, and pushes them after a restart', async () => {
    const { dataDir } = server;
    const port = Number(new URL(server.url).port);
    await server.close({ keepData: true });
    await page.reload();
    await card(page, 'Written offline').waitFor();
    await compose(page, 'Written while the server was down');
    await focus(page);
    await eventually(async () => assert.match((await page.getByRole('status').textContent())!, /waiting/));

    server = await startServer({ dataDir, port });
    await focus(page);
    await eventually(() => hasNote('Written while the server was down'));
  });

  it('two browsers editing one note offline converge on both fields, and show it', async () => {
    const { context: other, page: otherPage } = await signedInPage(browser, owner);
    await card(otherPage, 'Written online').waitFor();

    await context.setOffline(true);
    await other.setOffline(true);
    await card(page, 'Written online').getByRole('button', { name: 'Pin' }).click();
    await card(otherPage, 'Written online').hover();
    await card(otherPage, 'Written online').getByRole('button', { name: 'Background options' }).click();
    await otherPage.getByRole('button', { name: 'Sage', exact: true }).click();
    await context.setOffline(false);
    await other.setOffline(false);

    await eventually(async () => {
      await Promise.all([focus(page), focus(otherPage)]);
      const note = (await notes()).find((candidate) => candidate.content === 'Written online')!;
      assert.deepEqual([note.pinned, note.color], [true, 'sage']);
      for (const each of [page, otherPage]) {
        const shown = card(each, 'Written online');
        assert.equal(await shown.getByRole('button', { name: 'Unpin' }).count(), 1);
        assert.match((await shown.getAttribute('class'))!, /note-sage/);
      }
    }, 30_000);
    await other.close();
  });

  it('a session ended elsewhere hides the notes, keeps the edits, and syncs them after sign-in', async () => {
    const device = new TestClient(server.url);
    await device.post('/api/auth/login', { password: OWNER_PASSWORD });
    const { context: signedOut, page: devicePage } = await signedInPage(browser, device);
    await card(devicePage, 'Written online').waitFor();
    // Typed while the device cannot reach the server, so that a change is waiting when the session
    // ends: whichever finds the session gone first, the push or the live stream, finds it pending.
    await signedOut.setOffline(true);
    await compose(devicePage, 'Typed after the session ended');
    assert.equal((await device.post('/api/auth/logout')).status, 200);
    await signedOut.setOffline(false);
    // The device finds the session gone: the notes leave the screen (docs/webapp.md "Shared computers").
    await devicePage
      .getByText(/session on this device has ended.*Changes to 1 note have not reached/)
      .waitFor();
    assert.equal(await devicePage.getByRole('article').count(), 0);
    await devicePage.getByLabel('Password').fill(OWNER_PASSWORD);
    await devicePage.getByRole('button', { name: 'Sign in' }).click();
    await eventually(() => hasNote('Typed after the session ended'));
    await card(devicePage, 'Typed after the session ended').waitFor();
    await signedOut.close();
  });
});

describe('plain http on a name other than localhost', { skip }, () => {
  it('runs online without a service worker and says once that offline start needs HTTPS', async () => {
    const server = await startServer({ env: { ALLOWED_HOSTS: LAN_NAME } });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const url = server.url.replace('127.0.0.1', LAN_NAME);
      await page.goto(url);
      await page.getByLabel('Password').fill(OWNER_PASSWORD);
      await page.getByRole('button', { name: 'Create account' }).click();
      assert.equal(await page.evaluate(() => window.isSecureContext), false);
      assert.equal(await page.evaluate(() => 'serviceWorker' in navigator), false);
      await page.getByText('needs HTTPS or localhost', { exact: false }).waitFor();
      await compose(page, 'Saved over plain http');
      await page.getByRole('button', { name: 'Got it' }).click();
      await page.reload();
      await card(page, 'Saved over plain http').waitFor();
      assert.equal(await page.getByText('needs HTTPS or localhost', { exact: false }).count(), 0);
    } finally {
      await context.close();
      await server.close();
    }
  });
});
