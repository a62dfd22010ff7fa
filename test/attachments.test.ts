import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import sharp from 'sharp';
import { DECODES_AT_ONCE } from '../src/features/attachments/images.js';
import { SWEEP_GRACE_MS } from '../src/features/attachments/service.js';
import { DirectoryStorage } from '../src/features/attachments/storage.js';
import { attachmentStorageFor } from '../src/features/attachments/storageFor.js';
import { clientOf, createUserClient, OWNER_PASSWORD, setupOwner, TestClient } from './helpers/client.js';
import { declaredPng } from './helpers/pngBomb.js';
import { ManualClock, startServer, type TestServer, useOwner, useServer } from './helpers/server.js';
import { storedKeys } from './helpers/uploads.js';

const MiB = 1024 * 1024;
type Format = 'jpeg' | 'png' | 'webp' | 'gif' | 'avif';

async function image(format: Format, width = 320, height = 160): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#3a7' } })
    .toFormat(format)
    .toBuffer();
}

interface Part {
  data: Buffer | Uint8Array;
  name?: string;
  type?: string;
}

function form(parts: Record<string, Part | string>): FormData {
  const body = new FormData();
  for (const [field, part] of Object.entries(parts)) {
    if (typeof part === 'string') body.append(field, part);
    else
      body.append(
        field,
        new Blob([part.data], { type: part.type ?? 'application/octet-stream' }),
        part.name ?? 'upload',
      );
  }
  return body;
}

function upload(client: TestClient, noteId: string, parts: Record<string, Part | string>) {
  return client.request('POST', `/api/notes/${noteId}/attachments`, { body: form(parts) });
}

async function newNote(client: TestClient, fields: Record<string, unknown> = {}): Promise<any> {
  const response = await client.post('/api/notes', { title: 'With pictures', ...fields });
  assert.equal(response.status, 201);
  return response.body;
}

async function attach(client: TestClient, noteId: string, data?: Buffer, name = 'photo.jpg'): Promise<any> {
  const response = await upload(client, noteId, { file: { data: data ?? (await image('jpeg')), name } });
  assert.equal(response.status, 201, response.text);
  return response.body;
}

async function download(
  client: TestClient,
  noteId: string,
  query: string,
  headers: Record<string, string> = {},
) {
  const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const response = await fetch(new URL(`/api/notes/${noteId}/attachments?${query}`, client.baseUrl), {
    headers: { cookie, ...headers },
  });
  return {
    status: response.status,
    headers: response.headers,
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

/**
 * Sends a multipart body with a `file` part of `size` zero bytes, produced chunk by chunk and
 * without a Content-Length, so that neither side can have it in memory at once.
 */
function streamedUpload(client: TestClient, noteId: string, size: number): Promise<Response> {
  const boundary = 'streamed-upload-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const zeros = new Uint8Array(64 * 1024);
  let remaining = size;
  let stage: 'head' | 'file' | 'tail' | 'done' = 'head';
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (stage === 'head') {
        controller.enqueue(new TextEncoder().encode(head));
        stage = 'file';
      } else if (stage === 'file') {
        const length = Math.min(remaining, zeros.length);
        controller.enqueue(zeros.subarray(0, length));
        remaining -= length;
        if (remaining === 0) stage = 'tail';
      } else if (stage === 'tail') {
        controller.enqueue(new TextEncoder().encode(tail));
        stage = 'done';
      } else controller.close();
    },
  });
  const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  return fetch(new URL(`/api/notes/${noteId}/attachments`, client.baseUrl), {
    method: 'POST',
    body,
    duplex: 'half',
    headers: { cookie, 'content-type': `multipart/form-data; boundary=${boundary}` },
  } as RequestInit);
}

function leftoverUploads(server: TestServer): string[] {
  const dir = path.join(server.dataDir, 'uploads');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

describe('POST /api/notes/:id/attachments', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('accepts JPEG, PNG, WebP, GIF and AVIF and reports the detected type (D-ATT-1)', async () => {
    const note = await newNote(owner);
    for (const format of ['jpeg', 'png', 'webp', 'gif', 'avif'] as const) {
      const data = await image(format);
      const response = await upload(owner, note.id, { file: { data, name: `picture.${format}` } });
      assert.equal(response.status, 201, `${format}: ${response.text}`);
      const attachment = response.body;
      assert.equal(attachment.mimeType, `image/${format}`);
      assert.equal(attachment.size, data.length);
      assert.equal(attachment.noteId, note.id);
      assert.equal(attachment.filename, `picture.${format}`);
      assert.equal(attachment.thumbnailPath, `thumbnails/${attachment.id}.webp`);
      assert.match(attachment.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    assert.equal(leftoverUploads(server).length, 0);
  });

  it('types a JPEG by its bytes, whatever its filename and declared type say (D-ATT-1)', async () => {
    const note = await newNote(owner);
    const response = await upload(owner, note.id, {
      file: { data: await image('jpeg'), name: 'drawing.svg', type: 'image/svg+xml' },
    });
    assert.equal(response.status, 201);
    assert.equal(response.body.mimeType, 'image/jpeg');
    const file = await download(owner, note.id, `attachmentId=${response.body.id}`);
    assert.equal(file.headers.get('content-type'), 'image/jpeg');
  });

  it('keeps only the last path part of the filename, without control characters (D-ATT-3)', async () => {
    const note = await newNote(owner);
    const named = await attach(owner, note.id, undefined, '..\\..\\etc/pass\u202ewd\u0007.jpg');
    assert.equal(named.filename, 'passwd.jpg');
    const long = await attach(owner, note.id, undefined, `${'é'.repeat(300)}.jpg`);
    assert.equal(Array.from(long.filename).length, 255);
  });

  it('makes a WebP thumbnail of at most 200 px on the longer side, never upscaled (D-ATT-2)', async () => {
    const note = await newNote(owner);
    for (const [width, height, expected] of [
      [800, 400, [200, 100]],
      [90, 300, [60, 200]],
      [50, 30, [50, 30]],
    ] as const) {
      const attachment = await attach(owner, note.id, await image('png', width, height), 'a.png');
      const thumb = await download(owner, note.id, `attachmentId=${attachment.id}&thumb=1`);
      assert.equal(thumb.status, 200);
      assert.equal(thumb.headers.get('content-type'), 'image/webp');
      const metadata = await sharp(thumb.bytes).metadata();
      assert.equal(metadata.format, 'webp');
      assert.deepEqual([metadata.width, metadata.height], expected);
    }
  });

  it('turns the thumbnail upright by the EXIF orientation (D-ATT-2)', async () => {
    const note = await newNote(owner);
    // Stored 400x100 with "rotate 90° clockwise to view": the picture is 100 wide, 400 high.
    const sideways = await sharp({ create: { width: 400, height: 100, channels: 3, background: '#a33' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const attachment = await attach(owner, note.id, sideways);
    const thumb = await download(owner, note.id, `attachmentId=${attachment.id}&thumb=1`);
    const metadata = await sharp(thumb.bytes).metadata();
    assert.deepEqual([metadata.width, metadata.height], [50, 200]);
  });

  it('reports the size an image is shown at: upright by EXIF orientation, one frame of an animation', async () => {
    const note = await newNote(owner);
    const plain = await attach(owner, note.id, await image('png', 320, 160), 'wide.png');
    assert.deepEqual([plain.width, plain.height], [320, 160]);
    const sideways = await sharp({ create: { width: 400, height: 100, channels: 3, background: '#a33' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const portrait = await attach(owner, note.id, sideways, 'portrait.jpg');
    assert.deepEqual([portrait.width, portrait.height], [100, 400]);
    // Frames that differ: the GIF encoder folds identical ones into one.
    const frames = await Promise.all(
      ['#a33', '#3a3', '#33a'].map((background) =>
        sharp({ create: { width: 40, height: 30, channels: 3, background } })
          .png()
          .toBuffer(),
      ),
    );
    const animation = await sharp(frames, { join: { animated: true } })
      .gif()
      .toBuffer();
    assert.equal((await sharp(animation).metadata()).pages, 3);
    const animated = await attach(owner, note.id, animation, 'moving.gif');
    assert.deepEqual([animated.width, animated.height], [40, 30]);
    // The same numbers wherever the attachment is shown: listed, in the note, in its public page's JSON.
    const listed = await owner.get(`/api/notes/${note.id}/attachments`);
    assert.deepEqual(listed.body, [plain, portrait, animated]);
    const shared = await owner.post(`/api/notes/${note.id}/share`);
    const page = await clientOf(server).get(`/api/shared/${shared.body.token}`);
    assert.deepEqual(
      page.body.attachments.map((a: any) => [a.width, a.height]),
      [
        [320, 160],
        [100, 400],
        [40, 30],
      ],
    );
  });

  it('stores a valid client thumbnail as sent (D-ATT-2)', async () => {
    const note = await newNote(owner);
    const thumbnail = await image('webp', 180, 90);
    const response = await upload(owner, note.id, {
      file: { data: await image('jpeg', 1000, 500), name: 'big.jpg' },
      thumbnail: { data: thumbnail, name: 'thumb.webp' },
    });
    assert.equal(response.status, 201);
    const thumb = await download(owner, note.id, `attachmentId=${response.body.id}&thumb=1`);
    assert.deepEqual(thumb.bytes, thumbnail);
  });

  it('refuses a client thumbnail that is not WebP, over 512 px or over 1 MiB (D-ATT-2)', async () => {
    const note = await newNote(owner);
    const webp = await image('webp', 100, 100);
    const bad = [
      await image('png', 100, 100),
      await image('webp', 600, 100),
      Buffer.concat([webp, Buffer.alloc(MiB)]),
      Buffer.from('not an image'),
    ];
    const before = await storedKeys(server);
    for (const data of bad) {
      const response = await upload(owner, note.id, {
        file: { data: await image('jpeg'), name: 'a.jpg' },
        thumbnail: { data, name: 'thumb.webp' },
      });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'invalid_thumbnail');
    }
    assert.deepEqual(await storedKeys(server), before);
    assert.equal((await owner.get(`/api/notes/${note.id}`)).body.version, 1);
  });

  it('refuses SVG with 400 invalid_file and stores nothing (D-ATT-1)', async () => {
    const note = await newNote(owner);
    const svg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
    );
    const before = await storedKeys(server);
    const response = await upload(owner, note.id, { file: { data: svg, name: 'x.png', type: 'image/png' } });
    assert.equal(response.status, 400);
    assert.deepEqual(response.body, {
      statusCode: 400,
      error: 'Bad Request',
      code: 'invalid_file',
      message: 'The file must be a JPEG, PNG, WebP, GIF or AVIF image',
    });
    assert.deepEqual(await storedKeys(server), before);
    assert.equal(leftoverUploads(server).length, 0);
  });

  it('refuses other formats, corrupt bytes and a truncated image (D-ATT-1)', async () => {
    const note = await newNote(owner);
    const jpeg = await image('jpeg');
    const tiff = await sharp({ create: { width: 10, height: 10, channels: 3, background: '#000' } })
      .tiff()
      .toBuffer();
    for (const data of [
      tiff,
      Buffer.from('%PDF-1.7 not an image at all'),
      jpeg.subarray(0, jpeg.length - 200),
    ]) {
      const response = await upload(owner, note.id, { file: { data, name: 'a.jpg', type: 'image/jpeg' } });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'invalid_file');
    }
    assert.equal((await owner.get(`/api/notes/${note.id}`)).body.attachments.length, 0);
  });

  it('answers 400 invalid_file without a `file` part (D-ATT-1)', async () => {
    const note = await newNote(owner);
    const withoutFile: Record<string, Part | string>[] = [
      { title: 'hello' },
      { thumbnail: { data: await image('webp'), name: 't.webp' } },
    ];
    for (const parts of withoutFile) {
      const response = await upload(owner, note.id, parts);
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'invalid_file');
    }
  });

  it('answers 400 for malformed multipart and 415 for a body that is not multipart (D-ERR-3)', async () => {
    const note = await newNote(owner);
    const broken = await owner.request('POST', `/api/notes/${note.id}/attachments`, {
      body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\n\r\nabc',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
    });
    assert.equal(broken.status, 400);
    assert.equal(broken.body.code, 'invalid_multipart');
    const json = await owner.post(`/api/notes/${note.id}/attachments`, { file: 'x' });
    assert.equal(json.status, 415);
    assert.equal(json.body.code, 'unsupported_media_type');
  });

  it('answers 400 for a second `file` part and 413 for too many parts (D-ERR-3)', async () => {
    const note = await newNote(owner);
    const data = await image('jpeg');
    const twice = new FormData();
    twice.append('file', new Blob([data]), 'a.jpg');
    twice.append('file', new Blob([data]), 'b.jpg');
    const duplicate = await owner.request('POST', `/api/notes/${note.id}/attachments`, { body: twice });
    assert.equal(duplicate.status, 400);
    assert.equal(duplicate.body.code, 'invalid_file');
    const crowded = new FormData();
    for (let i = 0; i < 5; i++) crowded.append(`extra${i}`, new Blob([data]), 'x.jpg');
    const tooMany = await owner.request('POST', `/api/notes/${note.id}/attachments`, { body: crowded });
    assert.equal(tooMany.status, 413);
    assert.equal(tooMany.body.code, 'payload_too_large');
    assert.equal((await owner.get(`/api/notes/${note.id}`)).body.version, 1);
  });

  it('answers 413 file_too_large for 10 MiB + 1 byte without holding it in memory (D-ATT-1)', async () => {
    const note = await newNote(owner);
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
    gc();
    const baseline = process.memoryUsage();
    let peakRss = baseline.rss;
    let peakBuffers = baseline.arrayBuffers;
    // Live memory only: collect garbage (spent chunks) before each sample.
    const sampler = setInterval(() => {
      gc({ type: 'minor' });
      const now = process.memoryUsage();
      peakRss = Math.max(peakRss, now.rss);
      peakBuffers = Math.max(peakBuffers, now.arrayBuffers);
    }, 5);
    const response = await streamedUpload(owner, note.id, 10 * MiB + 1);
    clearInterval(sampler);
    assert.equal(response.status, 413);
    assert.deepEqual(await response.json(), {
      statusCode: 413,
      error: 'Payload Too Large',
      code: 'file_too_large',
      message: 'The file is larger than 10485760 bytes (10 MiB)',
    });
    // Client and server share this process. Live buffers are the exact measure: holding the
    // body would add 10 MiB. RSS also counts freed chunks the allocator keeps, so its bound
    // only catches gross copying (several copies of the body).
    const buffers = peakBuffers - baseline.arrayBuffers;
    const rss = peakRss - baseline.rss;
    assert.ok(buffers < 5 * MiB, `arrayBuffers grew by ${buffers} bytes`);
    assert.ok(rss < 32 * MiB, `rss grew by ${rss} bytes`);
    assert.equal(leftoverUploads(server).length, 0);
    assert.equal((await owner.get(`/api/notes/${note.id}`)).body.version, 1);
  });

  it('accepts a file of exactly 10 MiB (D-ATT-1)', async () => {
    const note = await newNote(owner);
    const png = await image('png', 20, 20);
    // Bytes after a PNG's last chunk are ignored by decoders: a valid image of any size.
    const data = Buffer.concat([png, Buffer.alloc(10 * MiB - png.length)]);
    const attachment = await attach(owner, note.id, data, 'exact.png');
    assert.equal(attachment.size, 10 * MiB);
  });

  it('answers 413 at once when the declared length exceeds what the limits allow (D-ATT-1)', async () => {
    const note = await newNote(owner);
    const response = await upload(owner, note.id, {
      file: { data: new Uint8Array(12 * MiB), name: 'a.jpg' },
    });
    assert.equal(response.status, 413);
    assert.equal(response.body.code, 'file_too_large');
    assert.equal(response.headers.get('connection'), 'close');
  });

  it('bumps the note’s version and updatedAt (D-NOTE-3, D-ATT-5)', async () => {
    const note = await newNote(owner);
    const attachment = await attach(owner, note.id);
    const updated = (await owner.get(`/api/notes/${note.id}`)).body;
    assert.equal(updated.version, 2);
    assert.ok(updated.updatedAt >= note.updatedAt);
    assert.equal(updated.updatedAt, attachment.createdAt);
  });

  it('answers 404 on another user’s note and stores nothing (D-ERR-2)', async () => {
    const note = await newNote(owner);
    const { client: stranger } = await createUserClient(server, 'stranger@example.com', undefined, owner);
    const before = await storedKeys(server);
    const response = await upload(stranger, note.id, { file: { data: await image('jpeg'), name: 'a.jpg' } });
    assert.equal(response.status, 404);
    assert.equal(response.body.code, 'note_not_found');
    assert.deepEqual(await storedKeys(server), before);
  });

  it('answers 401 without a session (D-ERR-2)', async () => {
    const note = await newNote(owner);
    const response = await upload(clientOf(server), note.id, {
      file: { data: await image('jpeg') },
    });
    assert.equal(response.status, 401);
  });

  it('takes uploads from a notes:write API key, not from a read-only one (D-KEY-3)', async () => {
    const note = await newNote(owner);
    const keyFor = async (scopes: string[]) => {
      const created = await owner.post('/api/settings/api-keys', { name: scopes.join(' '), scopes });
      assert.equal(created.status, 201);
      return { authorization: `Bearer ${created.body.key}` };
    };
    const anonymous = clientOf(server);
    const parts = { file: { data: await image('jpeg'), name: 'a.jpg' } };
    const writer = await keyFor(['notes:read', 'notes:write']);
    const written = await anonymous.request('POST', `/api/notes/${note.id}/attachments`, {
      body: form(parts),
      headers: writer,
    });
    assert.equal(written.status, 201);
    const reader = await keyFor(['notes:read']);
    const refused = await anonymous.request('POST', `/api/notes/${note.id}/attachments`, {
      body: form(parts),
      headers: reader,
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'insufficient_scope');
    const listed = await anonymous.get(`/api/notes/${note.id}/attachments`, { headers: reader });
    assert.deepEqual(listed.body, [written.body]);
  });

  it('lets a collaborator add and remove attachments (D-COLLAB-1)', async () => {
    const note = await newNote(owner);
    const { client: friend, userId } = await createUserClient(server, 'friend@example.com', undefined, owner);
    assert.equal((await owner.post(`/api/notes/${note.id}/collaborators`, { userId })).status, 201);
    const attachment = await attach(friend, note.id);
    const removed = await friend.delete(`/api/notes/${note.id}/attachments?attachmentId=${attachment.id}`);
    assert.equal(removed.status, 200);
  });
});

describe('GET /api/notes/:id/attachments', () => {
  let note: any;
  let original: Buffer;
  let attachment: any;
  const server = useServer();
  const owner = useOwner(server);
  before(async () => {
    note = await newNote(owner);
    original = await image('png', 640, 480);
    attachment = await attach(owner, note.id, original, 'Ferien \u00e9t\u00e9 100%.png');
  });

  it('lists the note’s attachments', async () => {
    const second = await attach(owner, (await newNote(owner)).id);
    const response = await owner.get(`/api/notes/${note.id}/attachments`);
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, [attachment]);
    assert.notEqual(second.noteId, note.id);
  });

  it('sends the stored bytes with the D-ATT-4 headers', async () => {
    const file = await download(owner, note.id, `attachmentId=${attachment.id}`);
    assert.equal(file.status, 200);
    assert.deepEqual(file.bytes, original);
    assert.equal(file.headers.get('content-type'), 'image/png');
    assert.equal(file.headers.get('content-length'), String(original.length));
    assert.equal(file.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(file.headers.get('cache-control'), 'private, no-cache');
    assert.match(file.headers.get('etag') ?? '', /^"[0-9a-f]{64}"$/);
    assert.equal(
      file.headers.get('content-disposition'),
      `inline; filename="Ferien _t_ 100_.png"; filename*=UTF-8''Ferien%20%C3%A9t%C3%A9%20100%25.png`,
    );
  });

  it('keeps quotes in a stored name out of the header syntax (D-ATT-4)', async () => {
    const boundary = 'quoted-name-boundary';
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="say \\"hi\\".jpg"\r\n\r\n`,
      ),
      await image('jpeg'),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const response = await owner.request('POST', `/api/notes/${note.id}/attachments`, {
      body,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    assert.equal(response.status, 201, response.text);
    assert.equal(response.body.filename, 'say "hi".jpg');
    const file = await download(owner, note.id, `attachmentId=${response.body.id}`);
    assert.equal(
      file.headers.get('content-disposition'),
      `inline; filename="say _hi_.jpg"; filename*=UTF-8''say%20%22hi%22.jpg`,
    );
    await owner.delete(`/api/notes/${note.id}/attachments?attachmentId=${response.body.id}`);
  });

  it('answers 304 when If-None-Match names the ETag (D-ATT-4)', async () => {
    for (const query of [`attachmentId=${attachment.id}`, `attachmentId=${attachment.id}&thumb=1`]) {
      const first = await download(owner, note.id, query);
      const etag = first.headers.get('etag')!;
      const again = await download(owner, note.id, query, { 'if-none-match': `"other", ${etag}` });
      assert.equal(again.status, 304);
      assert.equal(again.bytes.length, 0);
      assert.equal(again.headers.get('etag'), etag);
      const changed = await download(owner, note.id, query, { 'if-none-match': '"other"' });
      assert.equal(changed.status, 200);
    }
  });

  it('has browsers ask again before each use, so a signed-out browser shows no image (issue 26)', async () => {
    // A second session of the owner, as a shared computer's browser holds it.
    const browser = new TestClient(server.url);
    assert.equal((await browser.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
    const kept: [string, string][] = [];
    for (const query of [`attachmentId=${attachment.id}`, `attachmentId=${attachment.id}&thumb=1`]) {
      const first = await download(browser, note.id, query);
      assert.equal(first.status, 200);
      // Not `max-age`/`immutable`: a browser may not use its copy without asking first.
      assert.equal(first.headers.get('cache-control'), 'private, no-cache', query);
      const etag = first.headers.get('etag')!;
      const revalidated = await download(browser, note.id, query, { 'if-none-match': etag });
      assert.equal(revalidated.status, 304, query);
      assert.equal(revalidated.headers.get('cache-control'), 'private, no-cache');
      kept.push([query, etag]);
    }
    // The signed-out session's cookie, as a browser that kept it would send it with its question.
    const signedOut = new TestClient(server.url);
    for (const [name, value] of browser.cookies) signedOut.cookies.set(name, value);
    assert.equal((await browser.post('/api/auth/logout')).status, 200);
    for (const [query, etag] of kept) {
      const asked = await download(signedOut, note.id, query, { 'if-none-match': etag });
      assert.equal(asked.status, 401, query);
      assert.equal(asked.headers.get('etag'), null);
    }
  });

  it('answers 400 for thumb=1 without attachmentId (D-ATT-4)', async () => {
    const response = await owner.get(`/api/notes/${note.id}/attachments?thumb=1`);
    assert.equal(response.status, 400);
    assert.equal(response.body.code, 'validation_failed');
  });

  it('answers 404 for an attachment of another note (D-ATT-4)', async () => {
    const other = await newNote(owner);
    const response = await owner.get(`/api/notes/${other.id}/attachments?attachmentId=${attachment.id}`);
    assert.equal(response.status, 404);
    assert.equal(response.body.code, 'attachment_not_found');
  });

  it('answers 404 for a thumbnail that does not exist (D-ATT-4)', async () => {
    const bare = await attach(owner, note.id);
    await server.app.db
      .updateTable('attachments')
      .set({ thumbnail_path: null })
      .where('id', '=', bare.id)
      .execute();
    const response = await owner.get(`/api/notes/${note.id}/attachments?attachmentId=${bare.id}&thumb=1`);
    assert.equal(response.status, 404);
    assert.equal(response.body.code, 'thumbnail_not_found');
    await owner.delete(`/api/notes/${note.id}/attachments?attachmentId=${bare.id}`);
  });

  it('answers 404 for another user’s note, listed or downloaded (D-ERR-2)', async () => {
    const { client: stranger } = await createUserClient(server, 'stranger@example.com', undefined, owner);
    for (const query of ['', `?attachmentId=${attachment.id}`, `?attachmentId=${attachment.id}&thumb=1`]) {
      const response = await stranger.get(`/api/notes/${note.id}/attachments${query}`);
      assert.equal(response.status, 404);
      assert.equal(response.body.code, 'note_not_found');
    }
  });

  it('shows attachments in note list, get and search responses', async () => {
    const list = await owner.get('/api/notes');
    assert.deepEqual(list.body.find((n: any) => n.id === note.id).attachments, [attachment]);
    const one = await owner.get(`/api/notes/${note.id}`);
    assert.deepEqual(one.body.attachments, [attachment]);
    const found = await owner.get('/api/search?q=pictures');
    assert.deepEqual(found.body.find((n: any) => n.id === note.id).attachments, [attachment]);
  });
});

describe('DELETE /api/notes/:id/attachments', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('answers 400 without attachmentId and 404 for an unknown one (D-ATT-5)', async () => {
    const note = await newNote(owner);
    const missing = await owner.delete(`/api/notes/${note.id}/attachments`);
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'validation_failed');
    const unknown = await owner.delete(
      `/api/notes/${note.id}/attachments?attachmentId=6f1c2a52-5d1e-4f1b-9a55-2b0a2f4b7c11`,
    );
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'attachment_not_found');
  });

  it('removes the attachment and its files, and bumps the version (D-ATT-5)', async () => {
    const note = await newNote(owner);
    const attachment = await attach(owner, note.id);
    assert.deepEqual(await storedKeys(server), [
      `files/${attachment.id}`,
      `thumbnails/${attachment.id}.webp`,
    ]);
    const response = await owner.delete(`/api/notes/${note.id}/attachments?attachmentId=${attachment.id}`);
    assert.deepEqual(response.body, { success: true });
    const file = await owner.get(`/api/notes/${note.id}/attachments?attachmentId=${attachment.id}`);
    assert.equal(file.status, 404);
    const updated = (await owner.get(`/api/notes/${note.id}`)).body;
    assert.equal(updated.version, 3);
    assert.deepEqual(updated.attachments, []);
    assert.deepEqual(await storedKeys(server), []);
  });

  it('answers 404 on another user’s note and keeps the attachment (D-ERR-2)', async () => {
    const note = await newNote(owner);
    const attachment = await attach(owner, note.id);
    const { client: stranger } = await createUserClient(server, 'stranger@example.com', undefined, owner);
    const response = await stranger.delete(`/api/notes/${note.id}/attachments?attachmentId=${attachment.id}`);
    assert.equal(response.status, 404);
    assert.equal((await owner.get(`/api/notes/${note.id}`)).body.attachments.length, 1);
  });
});

describe('Deleting a note removes its attachment files (D-ATT-5)', () => {
  const clock = new ManualClock();
  const server = useServer({ clock, env: { TRASH_RETENTION_DAYS: '1' } });
  const owner = useOwner(server);

  it('on DELETE /api/notes/:id', async () => {
    const note = await newNote(owner);
    const keep = await attach(owner, (await newNote(owner)).id);
    await attach(owner, note.id);
    await attach(owner, note.id);
    assert.equal((await storedKeys(server)).length, 6);
    assert.equal((await owner.delete(`/api/notes/${note.id}`)).status, 200);
    assert.deepEqual(await storedKeys(server), [`files/${keep.id}`, `thumbnails/${keep.id}.webp`]);
    await owner.delete(`/api/notes/${keep.noteId}`);
  });

  it('when its owner is removed (D-AUTH-2)', async () => {
    const leaving = await createUserClient(server, 'leaving@example.com', undefined, owner);
    const note = await newNote(leaving.client);
    await attach(leaving.client, note.id);
    assert.equal((await storedKeys(server)).length, 2);
    assert.equal((await owner.delete(`/api/users/${leaving.userId}`)).status, 200);
    assert.deepEqual(await storedKeys(server), []);
  });

  it('when the trash is purged (D-NOTE-4)', async () => {
    const note = await newNote(owner, { trashed: true });
    await attach(owner, note.id);
    assert.equal((await storedKeys(server)).length, 2);
    clock.advance(2 * 86_400_000);
    assert.equal(await server.app.services.notes.purgeExpiredTrash(), 1);
    assert.deepEqual(await storedKeys(server), []);
  });
});

describe('Start-up sweep of attachment files (D-ATT-3)', () => {
  it('deletes old objects without a row and leftover uploads, keeps young ones and rows whose file is missing', async () => {
    const first = await startServer();
    const owner = await setupOwner(first);
    const note = await newNote(owner);
    const kept = await attach(owner, note.id);
    const lost = await attach(owner, note.id);
    const storage = attachmentStorageFor(first.app.appConfig, first.app.db);
    const bytes = () => {
      const file = path.join(first.dataDir, 'crashed');
      fs.writeFileSync(file, 'crashed before commit');
      return file;
    };
    const crashed = 'files/0b7cbd1a-54a5-4cf1-a2c8-5f3b4ee1a2b9';
    // Another process's upload between its put and its commit: younger than the grace period.
    const inFlight = 'files/6f0d3c2e-1b7a-4c55-9a51-0d8c7f1e2a3b';
    await storage.put(crashed, bytes(), { size: 21 });
    await storage.put(inFlight, bytes(), { size: 21 });
    await backdate(first, crashed, SWEEP_GRACE_MS + 60_000);
    await storage.delete([`files/${lost.id}`]);
    await first.close({ keepData: true });
    fs.mkdirSync(path.join(first.dataDir, 'uploads', 'upload-x'), { recursive: true });
    fs.writeFileSync(path.join(first.dataDir, 'uploads', 'upload-x', 'file'), 'half an upload');

    const second = await startServer({ dataDir: first.dataDir });
    try {
      assert.deepEqual(
        await storedKeys(second),
        [inFlight, `files/${kept.id}`, `thumbnails/${kept.id}.webp`, `thumbnails/${lost.id}.webp`].sort(),
      );
      assert.equal(fs.existsSync(path.join(first.dataDir, 'uploads')), false);
      owner.cookies.clear();
      const client = await setupOwnerAgain(second);
      const listed = await client.get(`/api/notes/${note.id}/attachments`);
      assert.deepEqual(
        listed.body.map((a: any) => a.id),
        [kept.id, lost.id],
      );
      const missing = await client.get(`/api/notes/${note.id}/attachments?attachmentId=${lost.id}`);
      assert.equal(missing.status, 404);
      assert.equal(missing.body.code, 'attachment_file_missing');
    } finally {
      await second.close();
    }
  });
});

/** Makes a stored object look `ms` older to the start-up sweep, in whichever store the server uses. */
async function backdate(server: TestServer, key: string, ms: number): Promise<void> {
  const storage = attachmentStorageFor(server.app.appConfig, server.app.db);
  if (storage instanceof DirectoryStorage) {
    const file = path.join(storage.root, key);
    const then = new Date(fs.statSync(file).mtimeMs - ms);
    fs.utimesSync(file, then, then);
  } else {
    await server.app.db
      .updateTable('attachment_objects')
      .set((eb) => ({ stored_at: eb('stored_at', '-', ms) }))
      .where('key', '=', key)
      .execute();
  }
}

async function setupOwnerAgain(server: TestServer): Promise<TestClient> {
  const client = clientOf(server);
  const response = await client.post('/api/auth/login', { password: 'correct horse battery' });
  assert.equal(response.status, 200);
  return client;
}

describe('Decode bombs: images over the pixel limit are refused undecoded', () => {
  // 40,000 pixels here, so that real images show the limit; the default is 40 megapixels.
  const server = useServer({ env: { MAX_IMAGE_PIXELS: '40000' } });
  const owner = useOwner(server);

  function assertImageTooLarge(response: { status: number; body: any }) {
    assert.equal(response.status, 413);
    assert.deepEqual(response.body, {
      statusCode: 413,
      error: 'Payload Too Large',
      code: 'image_too_large',
      message: 'The image has more than 40000 pixels',
    });
  }

  it('accepts an image of exactly MAX_IMAGE_PIXELS and refuses one pixel column more, storing nothing', async () => {
    const note = await newNote(owner);
    await attach(owner, note.id, await image('png', 200, 200));
    const before = await storedKeys(server);
    assertImageTooLarge(await upload(owner, note.id, { file: { data: await image('png', 201, 200) } }));
    assert.deepEqual(await storedKeys(server), before);
    assert.deepEqual(leftoverUploads(server), []);
    assert.equal((await owner.get(`/api/notes/${note.id}`)).body.version, 2);
  });

  it('refuses a 2 kB PNG declaring 16383×16383 interlaced 16-bit pixels from its header', async () => {
    const note = await newNote(owner);
    const bomb = declaredPng(16383, 16383);
    assert.ok(bomb.length < 2048);
    assertImageTooLarge(await upload(owner, note.id, { file: { data: bomb, name: 'bomb.png' } }));
  });

  it('refuses a client thumbnail over the limit with 413, whatever its format', async () => {
    const note = await newNote(owner);
    const response = await upload(owner, note.id, {
      file: { data: await image('jpeg', 100, 100), name: 'a.jpg' },
      thumbnail: { data: declaredPng(16383, 16383), name: 'thumb.webp' },
    });
    assertImageTooLarge(response);
    assert.equal((await owner.get(`/api/notes/${note.id}`)).body.version, 1);
  });
});

describe('Decode bombs under the default limit of 40 megapixels', () => {
  const owner = useOwner(useServer());

  it('refuses 6400×6400 (41 megapixels) with 413 image_too_large', async () => {
    const note = await newNote(owner);
    const response = await upload(owner, note.id, {
      file: { data: declaredPng(6400, 6400), name: 'big.png' },
    });
    assert.equal(response.status, 413);
    assert.equal(response.body.code, 'image_too_large');
  });

  it(`decodes at most ${DECODES_AT_ONCE} images at once, however many uploads arrive together`, async () => {
    const note = await newNote(owner);
    const png = await sharp({ create: { width: 1500, height: 1500, channels: 3, background: '#3a7' } })
      .png({ compressionLevel: 1 })
      .toBuffer();
    let mostAtOnce = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        mostAtOnce = Math.max(mostAtOnce, sharp.counters().process);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => upload(owner, note.id, { file: { data: png, name: 'p.png' } })),
    );
    watching = false;
    await watch;
    assert.deepEqual(
      responses.map((r) => r.status),
      Array(6).fill(201),
    );
    assert.ok(mostAtOnce >= 1, 'the watcher saw no decode at all');
    assert.ok(mostAtOnce <= DECODES_AT_ONCE, `${mostAtOnce} images were decoded at once`);
  });
});
