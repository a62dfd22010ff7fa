import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { jsonArrayPieces } from '../jsonArrays.js';

/** Past this much unsent data the next batch is not read until the client has taken some. */
const HIGH_WATER_MARK = 64 * 1024;

/**
 * An array that ends within this many bytes is sent whole: a list of 1,000 short notes is ~420
 * kB. The bound is what one request may gather in memory before its first byte (twice, with
 * the joined copy).
 */
const WHOLE_BYTES = 512 * 1024;

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends a 200 JSON array: either whole (a buffer, such as a list kept while unchanged) or made
 * of items that are UTF-8 JSON already (NoteJsonCache's answers, made of the route's schema
 * fields), sent as they are: no serializing, no encoding. An array that ends within WHOLE_BYTES
 * goes out whole, with its length, in one write: a stream costs a write per chunk and its own
 * machinery (docs/benchmarks.md, "Issue 31: whole answers"). A longer one is streamed group by
 * group (jsonArrayPieces), so a list of any size takes the memory of WHOLE_BYTES, one batch and
 * one chunk (docs/decisions/0004-streamed-lists.md). Fastify pipes the stream with backpressure:
 * the next batch is read only once the socket has taken the previous ones. When the client goes
 * away it destroys the stream, which ends the batches' iteration. An error before the first byte
 * is sent becomes an error response; one after it cannot any more: Fastify logs it and destroys
 * the socket, so the client sees a truncated response (no final chunk), never a short array that
 * looks complete.
 */
export async function sendJsonTextArray(
  reply: FastifyReply,
  array: Buffer | AsyncIterable<readonly Buffer[]>,
): Promise<FastifyReply> {
  reply.code(200).type(JSON_TYPE);
  if (Buffer.isBuffer(array)) return reply.send(array);
  const groups = jsonArrayPieces(array, (item) => item);
  const head: Buffer[] = [];
  let headBytes = 0;
  while (headBytes < WHOLE_BYTES) {
    const next = await groups.next();
    if (next.done) return reply.send(Buffer.concat(head, headBytes));
    for (const piece of next.value) {
      head.push(piece);
      headBytes += piece.length;
    }
  }
  async function* chunks() {
    yield Buffer.concat(head.splice(0), headBytes);
    for await (const pieces of groups) yield Buffer.concat(pieces);
  }
  return reply.send(Readable.from(chunks(), { objectMode: false, highWaterMark: HIGH_WATER_MARK }));
}
