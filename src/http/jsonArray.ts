import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { eventLoopTurns } from '../eventLoop.js';

/** A list lets the event loop turn after this much work, so other requests are served meanwhile. */
const LIST_SLICE_MS = 20;

/** Items are sent in chunks of about this many bytes, a big item in a chunk of its own. */
const CHUNK_BYTES = 64 * 1024;

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');
const EMPTY = Buffer.from('[]');

/**
 * The chunks of one JSON array whose items arrive in batches: `[`, the items separated by `,`,
 * `]`, each item as UTF-8 JSON (`encodeItem`). No chunk holds more than CHUNK_BYTES and one
 * item (a batch of 283 notes of 1 MB each would be 566 MB in one buffer). A chunk ends at the
 * latest with its batch, so what was read is sent before the next batch is read. Nothing is
 * yielded before the first batch is ready: an error up to then can still become an error
 * response.
 */
export async function* jsonArrayChunks<T>(
  batches: AsyncIterable<readonly T[]>,
  encodeItem: (item: T) => Buffer,
): AsyncGenerator<Buffer> {
  // A client reading as fast as the loopback allows never makes the socket push back, and
  // database reads resolve at once: without turns, one list of huge notes kept every other
  // request (health included) waiting for seconds (docs/benchmarks.md, "Abuse").
  const turn = eventLoopTurns(LIST_SLICE_MS);
  let separator = OPEN;
  for await (const batch of batches) {
    let parts: Buffer[] = [];
    let bytes = 0;
    for (const item of batch) {
      const encoded = encodeItem(item);
      parts.push(separator, encoded);
      bytes += separator.length + encoded.length;
      separator = COMMA;
      if (bytes >= CHUNK_BYTES) {
        yield Buffer.concat(parts, bytes);
        parts = [];
        bytes = 0;
        await turn();
      }
    }
    if (bytes > 0) yield Buffer.concat(parts, bytes);
    await turn();
  }
  yield separator === OPEN ? EMPTY : CLOSE;
}

/** Past this much unsent data the next batch is not read until the client has taken some. */
const HIGH_WATER_MARK = 64 * 1024;

/**
 * Sends a 200 JSON array of items that are UTF-8 JSON already (NoteJsonCache's answers, made of
 * the route's schema fields), as they are: no serializing, no encoding. An array that ends within
 * its first CHUNK_BYTES (a search's 100 notes, most lists) goes out whole, with its length, in
 * one write: a stream costs a second write and its own machinery per answer (docs/benchmarks.md,
 * "Issue 31: small answers in one write"). A longer one is streamed item by item, so a list of
 * any size takes the memory of one batch and one chunk (docs/decisions/0004-streamed-lists.md).
 * Fastify pipes the stream with backpressure: the next batch is read only once the socket has
 * taken the previous ones. When the client goes away it destroys the stream, which ends the
 * batches' iteration. An error before the first byte is sent becomes an error response; one
 * after it cannot any more: Fastify logs it and destroys the socket, so the client sees a
 * truncated response (no final chunk), never a short array that looks complete.
 */
export async function sendJsonTextArray(
  reply: FastifyReply,
  batches: AsyncIterable<readonly Buffer[]>,
): Promise<FastifyReply> {
  const chunks = jsonArrayChunks(batches, (item) => item);
  const head: Buffer[] = [];
  let headBytes = 0;
  while (headBytes < CHUNK_BYTES) {
    const next = await chunks.next();
    if (next.done) return reply.code(200).type(JSON_TYPE).send(Buffer.concat(head, headBytes));
    head.push(next.value);
    headBytes += next.value.length;
  }
  async function* all() {
    yield* head.splice(0);
    yield* chunks;
  }
  const body = Readable.from(all(), { objectMode: false, highWaterMark: HIGH_WATER_MARK });
  return reply.code(200).type(JSON_TYPE).send(body);
}

const JSON_TYPE = 'application/json; charset=utf-8';
