import { createDeflate, deflateSync } from 'node:zlib';

/**
 * Decode bombs for attachment tests and the abuse benchmark: PNG files whose header declares a
 * huge interlaced 16-bit RGBA image (8 bytes a pixel). The pixel limit is checked from the
 * header, so `declaredPng` (a valid IHDR and a tiny IDAT) is enough to test the refusal;
 * `fullPng` also carries the whole zero-filled image, which is what an unprotected server
 * would decode into gigabytes: 9.4 MB for 16383×16383 at deflate level 1, made in seconds
 * (level 9 makes it 2 MB, but takes half a minute).
 */
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const BYTES_PER_PIXEL = 8; // RGBA, 16 bits a channel
// Adam7 passes: x start, y start, x step, y step.
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

function png(width: number, height: number, idat: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([16, 6, 0, 0, 1], 8); // bit depth 16, RGBA, deflate, adaptive filter, Adam7
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A PNG declaring width×height pixels, with only a few rows of image data. */
export function declaredPng(width: number, height: number): Buffer {
  return png(width, height, deflateSync(Buffer.alloc(1 + width * BYTES_PER_PIXEL)));
}

/** Bytes of the filtered, interlaced image data: per pass, rows of a filter byte and pixels. */
function imageDataLength(width: number, height: number): number {
  let total = 0;
  for (const [x0, y0, dx, dy] of ADAM7) {
    const passWidth = Math.ceil((width - x0) / dx);
    const passHeight = Math.ceil((height - y0) / dy);
    if (passWidth > 0 && passHeight > 0) total += passHeight * (1 + passWidth * BYTES_PER_PIXEL);
  }
  return total;
}

/** A complete PNG of width×height transparent black pixels. */
export async function fullPng(width: number, height: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 1 });
  const parts: Buffer[] = [];
  deflate.on('data', (part: Buffer) => parts.push(part));
  const done = new Promise((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  const zeros = Buffer.alloc(4 * 1024 * 1024);
  for (let left = imageDataLength(width, height); left > 0; left -= zeros.length) {
    const ok = deflate.write(left >= zeros.length ? zeros : zeros.subarray(0, left));
    if (!ok) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await done;
  return png(width, height, Buffer.concat(parts));
}
