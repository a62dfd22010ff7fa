import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import sharp from 'sharp';
import yauzl from 'yauzl';
import yazl from 'yazl';
import type { TestClient } from './client.js';

/** A small real image, different for each `seed`. */
export function image(seed: number, format: 'png' | 'jpeg' = 'png'): Promise<Buffer> {
  const background = { r: (seed * 37) % 256, g: (seed * 91) % 256, b: (seed * 53) % 256 };
  return sharp({ create: { width: 40 + (seed % 20), height: 30, channels: 3, background } })
    .toFormat(format)
    .toBuffer();
}

/** A zip of these entries, in this order. */
export async function zipOf(entries: Record<string, Buffer | string>, compress = true): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of Object.entries(entries)) {
    zip.addBuffer(Buffer.isBuffer(data) ? data : Buffer.from(data), name, { compress });
  }
  zip.end();
  return buffer(zip.outputStream as Readable);
}

/** Every entry of a zip, by name. */
export async function unzip(data: Buffer): Promise<Map<string, Buffer>> {
  const zip = await yauzl.fromBufferPromise(data, { lazyEntries: true });
  const entries = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      zip
        .openReadStreamPromise(entry)
        .then(buffer)
        .then((bytes) => {
          entries.set(entry.fileName, bytes);
          zip.readEntry();
        }, reject);
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  return entries;
}

/** A multipart form with `data` as its `file` part. */
export function archiveForm(data: Buffer, name = 'archive.zip'): FormData {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(data)], { type: 'application/zip' }), name);
  return form;
}

/** Uploads `data` as an attachment of the note; the response as TestClient gives it. */
export function attach(client: TestClient, noteId: string, data: Buffer, name = 'photo.png') {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(data)]), name);
  return client.request('POST', `/api/notes/${noteId}/attachments`, { body: form });
}

/** A GET as the client whose body is bytes (TestClient reads bodies as text). */
export const fetchAs = (client: TestClient, url: string) =>
  fetch(new URL(url, client.baseUrl), {
    headers: { cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
  });

export const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** The sha256 of an attachment's download, or its status when it is not 200. */
export async function downloadSha(
  client: TestClient,
  noteId: string,
  attachmentId: string,
  { thumbnail = false } = {},
): Promise<string> {
  const response = await fetchAs(
    client,
    `/api/notes/${noteId}/attachments?attachmentId=${attachmentId}${thumbnail ? '&thumb=1' : ''}`,
  );
  return response.status === 200
    ? sha256(Buffer.from(await response.arrayBuffer()))
    : `status ${response.status}`;
}
