import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PRIVATE_FILE_MODE } from './fileModes.js';

/** Streams `source` into a new file (never over an existing one), hashing it on the way. */
export async function writeHashed(
  source: Readable,
  target: string,
  mode = PRIVATE_FILE_MODE,
): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  await pipeline(
    source,
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        size += chunk.length;
        hash.update(chunk);
        yield chunk;
      }
    },
    createWriteStream(target, { flags: 'wx', mode }),
  );
  return { sha256: hash.digest('hex'), size };
}
