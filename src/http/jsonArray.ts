import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/**
 * The chunks of one JSON array whose items arrive in batches: `[`, the items separated by `,`,
 * `]`. `serializeArray` turns a batch into a JSON array (the route's compiled response
 * serializer), whose brackets are dropped, so the body is byte for byte what serializing all
 * items at once gives. Nothing is yielded before the first batch is ready: an error up to then
 * can still become an error response.
 */
export async function* jsonArrayChunks<T>(
  batches: AsyncIterable<readonly T[]>,
  serializeArray: (items: readonly T[]) => string,
): AsyncGenerator<string> {
  let opened = false;
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    const items = serializeArray(batch).slice(1, -1);
    yield opened ? ',' : '[';
    opened = true;
    yield items;
  }
  yield opened ? ']' : '[]';
}

/** Past this much unsent data the next batch is not read until the client has taken some. */
const HIGH_WATER_MARK = 64 * 1024;

/**
 * Sends a 200 JSON array batch by batch, so a list of any size takes the memory of one batch
 * (docs/decisions/0004-streamed-lists.md). The route's 200 response schema serializes each
 * batch. Fastify pipes the stream with backpressure; when the client goes away it destroys the
 * stream, which ends the batches' iteration. An error after the first byte cannot become an
 * error response any more: Fastify logs it and destroys the socket, so the client sees a
 * truncated response (no final chunk), never a short array that looks complete.
 */
export function sendJsonArray<T>(reply: FastifyReply, batches: AsyncIterable<readonly T[]>): FastifyReply {
  // Fastify's types take an object payload; the 200 schema here is an array.
  const serialize = reply.getSerializationFunction('200') as ((items: readonly T[]) => string) | undefined;
  if (!serialize) throw new Error(`${reply.request.routeOptions.url} has no 200 response schema`);
  const body = Readable.from(jsonArrayChunks(batches, serialize), {
    objectMode: false,
    highWaterMark: HIGH_WATER_MARK,
  });
  return reply.code(200).type('application/json; charset=utf-8').send(body);
}
