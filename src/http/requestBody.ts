import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type AppError, errors } from '../errors.js';
import { errorBody } from './errorHandler.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The 413 a body over the route's bodyLimit gets; `payload_too_large` when not set. */
    bodyTooLarge?: () => AppError;
  }
}

function bodyLimit(request: FastifyRequest): number {
  return request.routeOptions.bodyLimit;
}

/** The declared Content-Length; NaN when there is none (chunked), so every comparison is false. */
function declaredLength(request: FastifyRequest): number {
  return Number(request.headers['content-length']);
}

function tooLarge(request: FastifyRequest): AppError {
  return (request.routeOptions.config.bodyTooLarge ?? errors.payloadTooLarge)();
}

/**
 * Reads what is left of a request body and drops it. False when more than `limit` bytes
 * arrive (reading stops there) or the client goes away first.
 */
function discardBody(raw: IncomingMessage, limit: number): Promise<boolean> {
  if (raw.destroyed) return Promise.resolve(false);
  // A parser that gave up part-way (the multipart reader) lets go of the rest.
  raw.unpipe();
  return new Promise((resolve) => {
    let received = 0;
    const finish = (drained: boolean) => {
      raw.off('data', onData).off('end', onEnd).off('close', onGone).off('error', onGone);
      resolve(drained);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        raw.pause();
        finish(false);
      }
    };
    const onEnd = () => finish(true);
    const onGone = () => finish(false);
    raw.on('data', onData).once('end', onEnd).once('close', onGone).once('error', onGone);
    raw.resume();
  });
}

/**
 * Every answer reaches the client, also one given before the request body was read: a 401 or
 * 403 from the auth hook, a 404 for an unknown note before an upload is read, a 415 before
 * parsing. Closing the connection then, while the client is still sending, makes it see EPIPE
 * or ECONNRESET instead of the answer. So:
 * - a body declared larger than the route's bodyLimit is refused with 413 before anything
 *   else, and the connection is closed (nothing of it is read);
 * - any other unread body is read and dropped, up to the route's bodyLimit, before the
 *   answer is sent, and the connection stays open for the next request;
 * - a body (chunked) that runs past the limit while it is dropped gets 413 instead, and the
 *   connection is closed.
 * Registered before the auth hook, so the 413 comes first.
 */
export function registerBodyDraining(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (declaredLength(request) > bodyLimit(request)) throw tooLarge(request);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    // `readableEnded` too: a request injected for tests (light-my-request) is never `complete`.
    if (request.raw.complete || request.raw.readableEnded) return payload;
    const limit = bodyLimit(request);
    if (!(declaredLength(request) > limit) && (await discardBody(request.raw, limit))) return payload;
    reply.header('connection', 'close');
    if (reply.statusCode === 413) return payload;
    const error = tooLarge(request);
    reply.code(413).type('application/json; charset=utf-8');
    return JSON.stringify(errorBody(error.statusCode, error.code, error.message));
  });
}
