import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import sharp from 'sharp';
import { MediaCache } from '../web/src/sync/mediaCache.js';
import { type MediaDatabase, openMediaDatabase, type QueuedUpload } from '../web/src/sync/mediaDatabase.js';
import type { ServerAttachment, ServerNote } from '../web/src/sync/types.js';
import { RETRY_MAX_MS, retryDelay, UploadQueue, type UploadQueueOptions } from '../web/src/sync/uploads.js';
import { useOwner, useServer } from './helpers/server.js';
import { fetchAs, ManualTimers } from './web-sync-helpers.js';

/**
 * The web app's image queue and file cache (web/src/sync/uploads.ts, mediaCache.ts) under
 * fake-indexeddb against the real server: what is queued survives a reopen, waits for its note,
 * retries with backoff while the server is unreachable, lands with the client thumbnail, and
 * leaves the queue when a pull shows it; the cache keeps files within its budgets.
 */

describe('images on the device', () => {
  const server = useServer();
  const owner = useOwner(server, { overSocket: true });

  let png: Blob;
  let thumbnail: Blob;
  before(async () => {
    const image = sharp({ create: { width: 800, height: 600, channels: 3, background: '#3a7' } });
    png = new Blob([new Uint8Array(await image.clone().png().toBuffer())], { type: 'image/png' });
    thumbnail = new Blob([new Uint8Array(await image.resize(512).webp().toBuffer())], { type: 'image/webp' });
  });

  async function newNote(): Promise<ServerNote> {
    const created = await owner.post<ServerNote>('/api/notes', { title: 'With image', content: '' });
    assert.equal(created.status, 201);
    return created.body;
  }

  class Clock {
    current = 1_000_000;
    now = () => this.current;
  }

  interface Harness {
    queue: UploadQueue;
    db: MediaDatabase;
    factory: IDBFactory;
    landed: ServerAttachment[];
    refused: string[];
  }

  async function openQueue(
    options: Partial<UploadQueueOptions> & { factory?: IDBFactory } = {},
  ): Promise<Harness> {
    const factory = options.factory ?? new IDBFactory();
    const db = await openMediaDatabase(factory, '1');
    const landed: ServerAttachment[] = [];
    const refused: string[] = [];
    const queue = await UploadQueue.open({
      db,
      baseUrl: owner.baseUrl,
      fetch: fetchAs(owner),
      onServer: () => true,
      onChange: () => undefined,
      onLanded: (_upload, attachment) => landed.push(attachment),
      onRefused: (_upload, message) => refused.push(message),
      timers: null,
      ...options,
    });
    return { queue, db, factory, landed, refused };
  }

  const image = (noteId: string, withThumbnail = true) => ({
    noteId,
    file: png,
    filename: 'photo.png',
    thumbnail: withThumbnail ? thumbnail : null,
    width: 800,
    height: 600,
  });

  describe('the upload queue', () => {
    it('lands an image with its client thumbnail, and drops it once a pull shows it', async () => {
      const note = await newNote();
      const { queue, landed } = await openQueue();
      await queue.add(image(note.id));
      await queue.run();
      assert.equal(landed.length, 1);
      const onServer = await owner.get<ServerAttachment[]>(`/api/notes/${note.id}/attachments`);
      assert.deepEqual(
        onServer.body.map((attachment) => attachment.id),
        [landed[0]!.id],
      );
      const stored = await fetchAs(owner)(
        `${owner.baseUrl}/api/notes/${note.id}/attachments?attachmentId=${landed[0]!.id}&thumb=1`,
      );
      assert.deepEqual(Buffer.from(await stored.arrayBuffer()), Buffer.from(await thumbnail.arrayBuffer()));
      // Landed but not pulled yet: still shown from the device.
      assert.equal(queue.forNote(note.id)[0]?.attachmentId, landed[0]!.id);
      await queue.settle(() => []);
      assert.equal(queue.forNote(note.id).length, 1, 'kept while the pulled note does not list it');
      await queue.settle(() => onServer.body);
      assert.deepEqual(queue.all(), []);
    });

    it('keeps a queued image across a reopen, and sends nothing before its note is on the server', async () => {
      const note = await newNote();
      let onServer = false;
      let requests = 0;
      const first = await openQueue({
        onServer: () => onServer,
        fetch: (input, init) => {
          requests++;
          return fetchAs(owner)(input, init);
        },
      });
      await first.queue.add(image(note.id, false));
      await first.queue.run();
      assert.equal(requests, 0);
      first.queue.close();
      first.db.close();

      onServer = true;
      const second = await openQueue({ factory: first.factory, onServer: () => onServer });
      assert.equal(second.queue.all().length, 1, 'the queue is in IndexedDB');
      const queued = second.queue.all()[0]!;
      assert.equal(queued.file.size, png.size);
      await second.queue.run();
      assert.equal(second.landed.length, 1);
    });

    it('retries with a growing delay while the server is unreachable or failing, then lands', async () => {
      const note = await newNote();
      const clock = new Clock();
      const timers = new ManualTimers();
      let answer: 'down' | 'error' | 'up' = 'down';
      const { queue, landed } = await openQueue({
        now: clock.now,
        timers,
        fetch: async (input, init) => {
          if (answer === 'down') throw new TypeError('fetch failed');
          if (answer === 'error') return new Response('{}', { status: 503 });
          return fetchAs(owner)(input, init);
        },
      });
      const attempts = (upload: QueuedUpload | undefined) => upload?.attempts;
      await queue.add(image(note.id));
      await queue.run();
      assert.equal(attempts(queue.all()[0]), 1);
      assert.equal(queue.all()[0]!.notBefore, clock.current + retryDelay(1));
      assert.equal(timers.fire(retryDelay(1)), 1, 'a retry is scheduled after the first delay');
      await queue.run();
      assert.equal(attempts(queue.all()[0]), 1, 'not due yet: no attempt');

      clock.current += retryDelay(1);
      answer = 'error';
      await queue.run();
      assert.equal(attempts(queue.all()[0]), 2);
      assert.equal(queue.all()[0]!.notBefore, clock.current + retryDelay(2));

      answer = 'up';
      await queue.run();
      assert.equal(landed.length, 0, 'waits out its delay');
      await queue.retryNow();
      assert.equal(landed.length, 1, 'the server answered again: sent at once');
      assert.equal(queue.all()[0]?.attachmentId, landed[0]!.id);
    });

    it('gives up on an image the server refuses for good, and says why', async () => {
      const note = await newNote();
      const { queue, refused, landed } = await openQueue();
      await queue.add({ ...image(note.id, false), file: new Blob(['not an image'], { type: 'image/png' }) });
      await queue.run();
      assert.equal(landed.length, 0);
      assert.equal(refused.length, 1);
      assert.match(refused[0]!, /image|file/i);
      assert.deepEqual(queue.all(), []);
    });

    it('doubles the delay from 1 s up to a minute', () => {
      assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8, 20].map(retryDelay), [
        1_000,
        2_000,
        4_000,
        8_000,
        16_000,
        32_000,
        RETRY_MAX_MS,
        RETRY_MAX_MS,
        RETRY_MAX_MS,
      ]);
    });
  });

  describe('the file cache', () => {
    it('serves a file it keeps without the server, and evicts the least recently shown over budget', async () => {
      const note = await newNote();
      const { queue, landed, db } = await openQueue();
      await queue.add(image(note.id));
      await queue.add({ ...image(note.id), filename: 'second.png' });
      await queue.run();
      const [first, second] = landed;
      const clock = new Clock();
      let online = true;
      const cache = new MediaCache({
        db,
        baseUrl: owner.baseUrl,
        fetch: (input, init) =>
          online ? fetchAs(owner)(input, init) : Promise.reject(new TypeError('offline')),
        budgets: { thumbnail: thumbnail.size * 1.5, original: 10 * png.size },
        now: clock.now,
      });
      const firstThumb = await cache.get(note.id, first!.id, 'thumbnail');
      assert.equal(firstThumb?.size, thumbnail.size);
      online = false;
      assert.equal(
        (await cache.get(note.id, first!.id, 'thumbnail'))?.size,
        thumbnail.size,
        'offline from the cache',
      );
      assert.equal(await cache.get(note.id, second!.id, 'thumbnail'), null, 'not cached, offline: nothing');
      online = true;
      clock.current += 1;
      await cache.get(note.id, second!.id, 'thumbnail');
      assert.ok((await cache.usage('thumbnail')) <= thumbnail.size * 1.5);
      online = false;
      assert.equal(await cache.get(note.id, first!.id, 'thumbnail'), null, 'the older one was evicted');
      assert.equal((await cache.get(note.id, second!.id, 'thumbnail'))?.size, thumbnail.size);
    });
  });
});
