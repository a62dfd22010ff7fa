import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { eventLoopTurns } from '../eventLoop.js';

/** A list lets the event loop turn after this much work, so other requests are served meanwhile. */
const LIST_SLICE_MS = 20;

/** Items are sent in chunks of about this many characters, a big item in a chunk of its own. */
const CHUNK_CHARACTERS = 64 * 1024;

/**
 * The chunks of one JSON array whose items arrive in batches: `[`, the items separated by `,`,
 * `]`. `serializeArray` is the route's compiled array serializer; it is given one item at a time
 * and its brackets are dropped, so the body is byte for byte what serializing all items at once
 * gives, while no string holds more than CHUNK_CHARACTERS and one item (a batch of 283 notes of
 * 1 MB each would be 566 million characters, more than V8 allows in one string). A chunk ends
 * at the latest with its batch, so what was read is sent before the next batch is read. Nothing
 * is yielded before the first batch is ready: an error up to then can still become an error
 * response.
 */
export async function* jsonArrayChunks<T>(
  batches: AsyncIterable<readonly T[]>,
  serializeArray: (items: readonly T[]) => string,
): AsyncGenerator<string> {
  // A client reading as fast as the loopback allows never makes the socket push back, and
  // database reads resolve at once: without turns, one list of huge notes kept every other
  // request (health included) waiting for seconds (docs/benchmarks.md, "Abuse").
  const turn = eventLoopTurns(LIST_SLICE_MS);
  let separator = '[';
  for await (const batch of batches) {
    let chunk = '';
    for (const item of batch) {
      chunk += separator + serializeArray([item]).slice(1, -1);
      separator = ',';
      if (chunk.length >= CHUNK_CHARACTERS) {
        yield chunk;
        chunk = '';
        await turn();
      }
    }
    if (chunk !== '') yield chunk;
    await turn();
  }
  yield separator === '[' ? '[]' : ']';
}

/** Past this much unsent data the next batch is not read until the client has taken some. */
const HIGH_WATER_MARK = 64 * 1024;

/**
 * Sends a 200 JSON array item by item, so a list of any size takes the memory of one batch of
 * rows and one serialized item (docs/decisions/0004-streamed-lists.md). The route's 200
 * response schema serializes each item. Fastify pipes the stream with backpressure: the next
 * item is serialized, and the next batch read, only once the socket has taken the previous
 * ones. When the client goes away it destroys the stream, which ends the batches' iteration. An error after the first byte cannot become an
 * error response any more: Fastify logs it and destroys the socket, so the client sees a
 * truncated response (no final chunk), never a short array that looks complete.
 */
export function sendJsonArray<T>(reply: FastifyReply, batches: AsyncIterable<readonly T[]>): FastifyReply {
  // Fastify's types take an object payload; the 200 schema here is an array.
  const serialize = reply.getSerializationFunction('200') as ((items: readonly T[]) => string) | undefined;
  if (!serialize) throw new Error(`${reply.request.routeOptions.url} has no 200 response schema`);
  return sendChunks(reply, jsonArrayChunks(batches, serialize));
}

/**
 * sendJsonArray for items that are JSON text already (a list of NoteJsonCache's answers, made
 * by the same schema's fields), sent as they are.
 */
export function sendJsonTextArray(
  reply: FastifyReply,
  batches: AsyncIterable<readonly string[]>,
): FastifyReply {
  return sendChunks(
    reply,
    jsonArrayChunks(batches, (items) => `[${items.join(',')}]`),
  );
}

function sendChunks(reply: FastifyReply, chunks: AsyncIterable<string>): FastifyReply {
  const body = Readable.from(chunks, { objectMode: false, highWaterMark: HIGH_WATER_MARK });
  return reply.code(200).type('application/json; charset=utf-8').send(body);
}
