/**
 * JSON arrays made of items that are UTF-8 JSON already (the note answer cache's buffers): the
 * bytes of `[`, the items separated by `,`, and `]`, without parsing or encoding anything again.
 */
import { eventLoopTurns } from './eventLoop.js';

/** A list lets the event loop turn after this much work, so other requests are served meanwhile. */
const LIST_SLICE_MS = 20;

/** Pieces are grouped into about this many bytes, a big item in a group of its own. */
const CHUNK_BYTES = 64 * 1024;

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');
const EMPTY = Buffer.from('[]');

/**
 * The pieces of one JSON array whose items arrive in batches (`[`, the items with `,` between
 * them, `]`, each item as `encodeItem` makes it), in groups: no group holds more than CHUNK_BYTES
 * and one item (a batch of 283 notes of 1 MB each would be 566 MB in one buffer). A group ends at
 * the latest with its batch, so what was read is sent before the next batch is read. Nothing is
 * yielded before the first batch is ready: an error up to then can still become an error
 * response. The groups are the items' own buffers, not copies: whoever sends them joins them once.
 */
export async function* jsonArrayPieces<T>(
  batches: AsyncIterable<readonly T[]>,
  encodeItem: (item: T) => Buffer,
): AsyncGenerator<Buffer[]> {
  // A client reading as fast as the loopback allows never makes the socket push back, and
  // database reads resolve at once: without turns, one list of huge notes kept every other
  // request (health included) waiting for seconds (docs/benchmarks.md, "Abuse").
  const turn = eventLoopTurns(LIST_SLICE_MS);
  let separator = OPEN;
  for await (const batch of batches) {
    let pieces: Buffer[] = [];
    let bytes = 0;
    for (const item of batch) {
      const encoded = encodeItem(item);
      pieces.push(separator, encoded);
      bytes += separator.length + encoded.length;
      separator = COMMA;
      if (bytes >= CHUNK_BYTES) {
        yield pieces;
        pieces = [];
        bytes = 0;
        await turn();
      }
    }
    if (bytes > 0) yield pieces;
    await turn();
  }
  yield [separator === OPEN ? EMPTY : CLOSE];
}

/** The whole array of these items, in one buffer. */
export function joinJsonArray(items: readonly Buffer[]): Buffer {
  if (items.length === 0) return EMPTY;
  const pieces: Buffer[] = [OPEN];
  for (const item of items) pieces.push(item, COMMA);
  pieces[pieces.length - 1] = CLOSE;
  return Buffer.concat(pieces);
}
