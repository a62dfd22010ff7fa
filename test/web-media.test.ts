/**
 * Images, conflict copies and version history in the web app (issue 14), in Debian's Chromium
 * against the real server: images added by button, paste and drop, with the client thumbnail;
 * the upload queue with the server stopped and restarted; thumbnails shown offline from the
 * device; caches gone after sign-out; Compare's three choices; restoring a version.
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import type { ServerAttachment, ServerNote } from '../web/src/sync/index.js';
import {
  card,
  compose,
  eventually,
  focus,
  seriousViolations,
  signedInContext,
  signedInPage,
  skipWithoutChromium as skip,
  useBrowser,
} from './helpers/browser.js';
import { setupOwner, type TestClient } from './helpers/client.js';
import { startServer, type TestServer, useOwner, useServer } from './helpers/server.js';
import { fetchAs } from './web-sync-helpers.js';

const browser = useBrowser();
let red: Buffer;
before(async () => {
  red = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#e00000' } })
    .png()
    .toBuffer();
});

/** The image in the card (or dialog) has been decoded and has its size on screen. */
async function showsImage(scope: ReturnType<Page['locator']>, alt: string): Promise<string> {
  const image = scope.getByRole('img', { name: alt });
  await image.waitFor();
  return eventually(async () => {
    const { src, loaded } = await image.evaluate((element: HTMLImageElement) => ({
      src: element.src,
      loaded: element.complete && element.naturalWidth > 0,
    }));
    assert.ok(loaded, `${alt} is decoded`);
    return src;
  });
}

async function attachmentsOf(owner: TestClient, title: string): Promise<ServerAttachment[]> {
  const note = (await owner.get<ServerNote[]>('/api/notes')).body.find((each) => each.content === title);
  assert.ok(note, `the server has "${title}"`);
  return note.attachments;
}

/** Drops (or pastes) `bytes` as an image file onto the element `selector` finds. */
async function dispatchImage(
  page: Page,
  selector: string,
  kind: 'drop' | 'paste',
  bytes: Buffer,
  name: string,
) {
  await page.evaluate(
    ({ selector, kind, bytes, name }) => {
      const data = new DataTransfer();
      data.items.add(new File([new Uint8Array(bytes)], name, { type: 'image/png' }));
      const init = { bubbles: true, cancelable: true };
      const event =
        kind === 'drop'
          ? new DragEvent('drop', { ...init, dataTransfer: data })
          : new ClipboardEvent('paste', { ...init, clipboardData: data });
      document.querySelector(selector)!.dispatchEvent(event);
    },
    { selector, kind, bytes: [...bytes], name },
  );
}

describe('images', { skip }, () => {
  let server: TestServer;
  let owner: TestClient;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server.url);
    ({ context, page } = await signedInPage(browser, owner, { bypassCSP: true }));
    await page.getByRole('textbox', { name: 'Take a note…' }).waitFor();
    // The service worker precached the shell: the page can reload with the server gone.
    await page.evaluate(() => navigator.serviceWorker.ready);
    await eventually(async () =>
      assert.ok(
        await page.evaluate(() => navigator.serviceWorker.controller !== null),
        'the service worker controls the page',
      ),
    );
  });
  after(async () => {
    await context?.close();
    await server?.close();
  });

  const editor = () => page.getByRole('dialog');

  /** A note with an image, made through the API as another device of the owner would. */
  async function noteWithImageFromElsewhere(content: string, image: Buffer, name: string): Promise<void> {
    const note = (await owner.post<ServerNote>('/api/notes', { content })).body;
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(image)], { type: 'image/png' }), name);
    const upload = await fetchAs(owner)(`${server.url}/api/notes/${note.id}/attachments`, {
      method: 'POST',
      body: form,
    });
    assert.equal(upload.status, 201);
  }

  it('adds an image with "Add image", with a WebP thumbnail the browser made (a card to look at)', async () => {
    await compose(page, 'Beach day');
    await card(page, 'Beach day').click();
    const chooser = page.waitForEvent('filechooser');
    await editor().getByRole('button', { name: 'Add image' }).click();
    await (await chooser).setFiles({ name: 'beach.png', mimeType: 'image/png', buffer: red });
    await showsImage(editor(), 'beach.png');
    await editor().getByRole('button', { name: 'Close' }).click();
    await showsImage(card(page, 'Beach day'), 'beach.png');

    const [attachment] = await eventually(async () => {
      const attachments = await attachmentsOf(owner, 'Beach day');
      assert.equal(attachments.length, 1);
      return attachments;
    });
    const note = (await owner.get<ServerNote[]>('/api/notes')).body.find(
      (each) => each.content === 'Beach day',
    )!;
    const thumb = await fetchAs(owner)(
      `${server.url}/api/notes/${note.id}/attachments?attachmentId=${attachment!.id}&thumb=1`,
    );
    const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    // The server's own thumbnails are at most 200 px: 512 is the one the browser sent.
    assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 512, 384]);

    // The pull has replaced the image shown from the device by the server's: nothing re-renders now.
    await card(page, 'Beach day').locator('figure.note-image:not(.queued) img').waitFor();
    await showsImage(card(page, 'Beach day'), 'beach.png');
    const file = path.join(os.tmpdir(), 'web-media-card.png');
    const box = (await card(page, 'Beach day').getByRole('img', { name: 'beach.png' }).boundingBox())!;
    await card(page, 'Beach day').screenshot({ path: file });
    const cardBox = (await card(page, 'Beach day').boundingBox())!;
    const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    let redPixels = 0;
    for (let y = Math.round(box.y - cardBox.y); y < box.y - cardBox.y + box.height && y < info.height; y++)
      for (let x = Math.round(box.x - cardBox.x); x < box.x - cardBox.x + box.width && x < info.width; x++) {
        const at = (y * info.width + x) * 3;
        if (data[at]! > 200 && data[at + 1]! < 40 && data[at + 2]! < 40) redPixels++;
      }
    assert.ok(redPixels > box.width * box.height * 0.9, `the image fills its box (${redPixels} red pixels)`);
    // Above the text, as in Keep.
    const text = (await card(page, 'Beach day').getByText('Beach day').boundingBox())!;
    assert.ok(box.y + box.height <= text.y);
  });

  it('opens the original in a viewer, and deletes an image from the editor', async () => {
    await card(page, 'Beach day').click();
    await editor().getByRole('button', { name: 'View beach.png' }).click();
    const viewer = page.getByRole('dialog', { name: 'beach.png' });
    await showsImage(viewer, 'beach.png');
    assert.equal(
      await viewer.getByRole('img').evaluate((element: HTMLImageElement) => element.naturalWidth),
      800,
    );
    assert.deepEqual(await seriousViolations(page), []);
    await viewer.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('dialog', { name: 'Note' }).getByRole('button', { name: 'Delete image' }).click();
    await page
      .getByRole('alertdialog', { name: 'Delete image?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await eventually(async () => assert.deepEqual(await attachmentsOf(owner, 'Beach day'), []));
    await eventually(async () =>
      assert.equal(await page.getByRole('dialog', { name: 'Note' }).getByRole('img').count(), 0),
    );
    await page.getByRole('dialog', { name: 'Note' }).getByRole('button', { name: 'Close' }).click();
  });

  it('adds an image pasted into the editor', async () => {
    await compose(page, 'Pasted');
    await card(page, 'Pasted').click();
    await dispatchImage(page, 'dialog.editor textarea', 'paste', red, 'pasted.png');
    await showsImage(editor(), 'pasted.png');
    await editor().getByRole('button', { name: 'Close' }).click();
    await eventually(async () => assert.equal((await attachmentsOf(owner, 'Pasted')).length, 1));
  });

  it('adds an image dropped onto the composer to the note it makes', async () => {
    await page.getByRole('textbox', { name: 'Take a note…' }).click();
    await dispatchImage(page, 'form.composer', 'drop', red, 'dropped.png');
    await showsImage(page.locator('form.composer'), 'dropped.png');
    await page.getByRole('textbox', { name: 'Take a note…' }).fill('Dropped');
    await page.getByRole('button', { name: 'Close' }).click();
    await showsImage(card(page, 'Dropped'), 'dropped.png');
    await eventually(async () => assert.equal((await attachmentsOf(owner, 'Dropped')).length, 1));
  });

  it('shows a thumbnail it has kept with the network gone, after a reload', async () => {
    await noteWithImageFromElsewhere('From elsewhere', red, 'elsewhere.png');
    await focus(page);
    await showsImage(card(page, 'From elsewhere'), 'elsewhere.png');

    await context.setOffline(true);
    await page.reload();
    const src = await showsImage(card(page, 'From elsewhere'), 'elsewhere.png');
    assert.match(src, /^blob:/);
    await context.setOffline(false);
  });

  it('shows the cards before the device image store opens, and their images once it has', async () => {
    await noteWithImageFromElsewhere('Held back', red, 'held.png');
    await focus(page);
    await showsImage(card(page, 'Held back'), 'held.png');
    // A second tab whose image database answers its open only when the test says so (the
    // request's success listeners are held back, and the app's open waits on them).
    const held = await context.newPage();
    // A string: tsx's helpers are not defined in the page.
    await held.addInitScript(`(() => {
      const open = IDBFactory.prototype.open;
      let release;
      const released = new Promise((resolve) => (release = resolve));
      window.releaseMediaOpen = release;
      IDBFactory.prototype.open = function (name, version) {
        const request = open.call(this, name, version);
        if (!name.startsWith('keepsake-media-')) return request;
        const listen = request.addEventListener.bind(request);
        request.addEventListener = (type, listener) =>
          listen(type, (event) => {
            const deliver = () => listener.call(request, event);
            if (type === 'success') released.then(deliver);
            else deliver();
          });
        return request;
      };
    })()`);
    try {
      await held.goto(server.url);
      const figure = card(held, 'Held back').locator('figure.note-image');
      await figure.waitFor();
      assert.equal(await figure.getByRole('img').count(), 0, 'no image file before the store opens');
      await held.evaluate(() => (window as unknown as { releaseMediaOpen: () => void }).releaseMediaOpen());
      await showsImage(card(held, 'Held back'), 'held.png');
    } finally {
      await held.close();
    }
  });

  it("sizes a card's image by its own ratio before it loads: nothing moves when it arrives", async () => {
    const tall = await sharp({ create: { width: 300, height: 600, channels: 3, background: '#0050e0' } })
      .png()
      .toBuffer();
    // The image's files are held back until the box has been measured; held from before the note
    // exists, since the live stream's hint may bring it to the page at once.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const isFile = (url: URL) =>
      url.pathname.endsWith('/attachments') && url.searchParams.has('attachmentId');
    await context.route(isFile, async (route) => {
      await released;
      await route.continue();
    });
    await noteWithImageFromElsewhere('Portrait', tall, 'tall.png');
    await focus(page);
    const figure = card(page, 'Portrait').locator('figure.note-image');
    await figure.waitFor();
    assert.equal(await figure.getByRole('img').count(), 0, 'the image is not there yet');
    const before = (await figure.boundingBox())!;
    assert.ok(
      Math.abs(before.width / before.height - 1 / 2) < 0.02,
      `a 1:2 box (${before.width}×${before.height})`,
    );
    release();
    await showsImage(card(page, 'Portrait'), 'tall.png');
    const after = (await figure.boundingBox())!;
    assert.deepEqual([after.width, after.height], [before.width, before.height]);
    await context.unroute(isFile);
  });

  it('queues an image while the server is stopped, shows it throughout and across a reload, and lands it after a restart', async () => {
    const { dataDir } = server;
    const port = Number(new URL(server.url).port);
    await server.close({ keepData: true });
    await card(page, 'Dropped').click();
    const chooser = page.waitForEvent('filechooser');
    await editor().getByRole('button', { name: 'Add image' }).click();
    await (await chooser).setFiles({ name: 'offline.png', mimeType: 'image/png', buffer: red });
    await editor().getByRole('button', { name: 'Close' }).click();
    await showsImage(card(page, 'Dropped'), 'offline.png');

    await page.reload();
    await showsImage(card(page, 'Dropped'), 'offline.png');
    await showsImage(card(page, 'Dropped'), 'dropped.png');

    server = await startServer({ dataDir, port });
    await focus(page);
    await eventually(async () => {
      const names = (await attachmentsOf(owner, 'Dropped')).map((attachment) => attachment.filename);
      assert.deepEqual(names.sort(), ['dropped.png', 'offline.png']);
    }, 30_000);
    await focus(page);
    // Shown from the server's copy now, once (the device's copy has left the queue).
    await card(page, 'Dropped').locator('figure.note-image:not(.queued) img[alt="offline.png"]').waitFor();
    await eventually(async () =>
      assert.equal(await card(page, 'Dropped').getByRole('img', { name: 'offline.png' }).count(), 1),
    );
    await showsImage(card(page, 'Dropped'), 'offline.png');
  });

  it('deletes every image kept on the device on sign-out', async () => {
    const databases = () =>
      page.evaluate(async () => (await indexedDB.databases()).map((database) => database.name ?? ''));
    assert.ok((await databases()).some((name) => name.startsWith('keepsake-media-u')));
    await eventually(async () => assert.equal(await page.getByRole('status').textContent(), 'All saved'));
    await page.getByRole('button', { name: 'Account' }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page
      .getByRole('alertdialog', { name: 'Sign out?' })
      .getByRole('button', { name: 'Sign out' })
      .click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.deepEqual(
      (await databases()).filter((name) => name.startsWith('keepsake-')),
      [],
    );
  });
});

describe('conflict copies and version history', { skip }, () => {
  const server = useServer();
  const owner = useOwner(server, { overSocket: true });
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    context = await signedInContext(browser, owner, { bypassCSP: true });
    page = await context.newPage();
  });
  after(() => context?.close());

  const notes = async () => (await owner.get<ServerNote[]>('/api/notes?filter=all')).body;
  const trashed = async () => (await owner.get<ServerNote[]>('/api/notes?filter=trashed')).body;

  /** A note whose content two devices changed from version 1: the older text is kept as a copy. */
  async function conflicted(title: string): Promise<{ note: ServerNote; copyId: string }> {
    const note = (await owner.post<ServerNote>('/api/notes', { title, content: 'milk\nbread\neggs' })).body;
    const push = (content: string, timestamp: number) =>
      owner.post<{ results: { conflictCopyId?: string }[] }>('/api/sync', {
        changes: [{ noteId: note.id, operation: 'update', timestamp, baseVersion: 1, data: { content } }],
      });
    await push('milk\nbrown bread\neggs', Date.now());
    const copyId = (await push('milk\nrye bread\neggs', Date.now() - 60_000)).body.results[0]?.conflictCopyId;
    assert.ok(copyId, 'the server kept a conflict copy');
    return { note, copyId };
  }

  const cases = [
    { choice: 'Keep this', kept: 'milk\nrye bread\neggs', trashedOne: 'note' },
    { choice: 'Keep that', kept: 'milk\nbrown bread\neggs', trashedOne: 'copy' },
    { choice: 'Keep both', kept: null, trashedOne: null },
  ] as const;
  for (const { choice, kept, trashedOne } of cases) {
    it(`resolves a conflict through Compare: ${choice}`, async () => {
      const title = `Shopping ${choice}`;
      const { note, copyId } = await conflicted(title);
      await page.goto(server.url);
      const copyCard = page.locator(`article[data-note-id="${copyId}"]`);
      await copyCard.getByText('Conflict copy').waitFor();
      await copyCard.getByRole('button', { name: 'Compare' }).click();
      const dialog = page.getByRole('dialog', { name: 'Compare versions' });
      await dialog.waitFor();
      // The differences are marked on each side.
      assert.deepEqual(await dialog.locator('ins').allTextContents(), ['rye']);
      assert.deepEqual(await dialog.locator('del').allTextContents(), ['brown']);
      if (choice === 'Keep this') assert.deepEqual(await seriousViolations(page), []);
      await dialog.getByRole('button', { name: choice }).click();

      await eventually(async () => {
        const active = (await notes()).filter((each) => each.title === title);
        const inTrash = (await trashed()).map((each) => each.id);
        if (trashedOne === null) {
          assert.equal(active.length, 2, 'both kept, the copy without its mark');
          assert.deepEqual(
            inTrash.filter((id) => id === note.id || id === copyId),
            [],
          );
        } else {
          assert.deepEqual(
            active.map((each) => each.content),
            [kept],
          );
          assert.ok(inTrash.includes(trashedOne === 'note' ? note.id : copyId), 'the other one is in Trash');
        }
      });
      await eventually(async () => assert.equal(await page.getByText('Conflict copy').count(), 0));
    });
  }

  it('lists the versions of a note and restores one, which syncs as an edit', async () => {
    const note = (await owner.post<ServerNote>('/api/notes', { title: 'Poem', content: 'first draft' })).body;
    await owner.patch(`/api/notes/${note.id}`, { content: 'second draft' });
    await owner.patch(`/api/notes/${note.id}`, { content: 'third draft' });
    await page.goto(server.url);
    await card(page, 'Poem').click();
    await page.getByRole('button', { name: 'Version history' }).click();
    const dialog = page.getByRole('dialog', { name: 'Version history' });
    await dialog.getByText('first draft').waitFor();
    assert.deepEqual(await dialog.locator('.revision-text').allTextContents(), [
      'third draft',
      'second draft',
      'first draft',
    ]);
    assert.deepEqual(await seriousViolations(page), []);
    await dialog.getByRole('button', { name: 'Restore version 1' }).click();
    await eventually(async () => {
      const now = (await owner.get<ServerNote>(`/api/notes/${note.id}`)).body;
      assert.deepEqual([now.content, now.version], ['first draft', 4]);
    });
    const text = page.getByRole('dialog', { name: 'Poem' }).getByRole('textbox', { name: 'Note' });
    await eventually(async () => assert.equal(await text.inputValue(), 'first draft'));
  });
});
