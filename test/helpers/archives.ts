import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import sharp from 'sharp';
import yauzl from 'yauzl';
import yazl from 'yazl';

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
  form.append('file', new Blob([data], { type: 'application/zip' }), name);
  return form;
}

export const toStream = (data: Buffer) => Readable.from([data]);
