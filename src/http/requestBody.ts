import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type AppError, errors } from '../errors.js';
import { errorBody } from './errorHandler.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The 413 a body over the route's bodyLimit gets; `payload_too_large` when not set. */
    bodyTooLarge?: () => AppError;
  }
}

/**
 * How much of a refused body is still read, and dropped, after its answer before the
 * connection is closed (nginx's lingering close): at most `bytes`, for at most `totalMs`, and
 * for at most `idleMs` without a byte arriving.
 */
export interface LingerLimits {
  bytes: number;
  totalMs: number;
  idleMs: number;
}

/** nginx's lingering_time and lingering_timeout; 1 GiB caps what a fast link sends in that time. */
const LINGER_LIMITS: LingerLimits = { bytes: 1024 * 1024 * 1024, totalMs: 30_000, idleMs: 5_000 };

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
 * Reads what is left of a request body and drops it. False when more than `bytes` arrive or
 * a time limit passes (reading stops then), or when the client goes away first.
 */
function discardBody(
  raw: IncomingMessage,
  { bytes, totalMs, idleMs }: Pick<LingerLimits, 'bytes'> & Partial<LingerLimits>,
): Promise<boolean> {
  if (raw.destroyed) return Promise.resolve(false);
  // A parser that gave up part-way (the multipart reader) lets go of the rest.
  raw.unpipe();
  return new Promise((resolve) => {
    let received = 0;
    let settled = false;
    const finish = (drained: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(idle);
      raw.off('data', onData).off('end', onEnd).off('close', onGone).off('error', onGone);
      if (!drained) raw.pause();
      resolve(drained);
    };
    const onData = (chunk: Buffer) => {
      idle?.refresh();
      received += chunk.length;
      if (received > bytes) finish(false);
    };
    const onEnd = () => finish(true);
    const onGone = () => finish(false);
    const timer = (ms: number | undefined) => (ms === undefined ? undefined : setTimeout(onGone, ms).unref());
    const total = timer(totalMs);
    const idle = timer(idleMs);
    raw.on('data', onData).once('end', onEnd).once('close', onGone).once('error', onGone);
    raw.resume();
  });
}

/**
 * Sends the answer with `Connection: close`, but closes only once the client has stopped
 * sending. Closing a socket with unread bytes makes the kernel reset the connection, and a
 * client still writing its body then sees EPIPE or ECONNRESET, often before it has read the
 * answer. So, as nginx does: once the answer is written the server half-closes (FIN), reads
 * and drops what still comes until the body ends or a linger limit passes, then closes.
 */
function answerThenLinger(raw: IncomingMessage, reply: FastifyReply, limits: LingerLimits): void {
  reply.header('connection', 'close');
  const socket = raw.socket as Socket | null;
  // A request injected for tests (light-my-request) has no socket to linger on.
  if (!socket || typeof socket.destroySoon !== 'function') return;
  let answered = false;
  let lingered = false;
  const closeWhenDone = () => {
    if (answered && lingered) socket.destroy();
  };
  // Node calls this once the last answer on a `Connection: close` socket has been written.
  socket.destroySoon = () => {
    answered = true;
    if (socket.writable) socket.end();
    closeWhenDone();
  };
  void discardBody(raw, limits).then(() => {
    lingered = true;
    closeWhenDone();
  });
}

/**
 * Every answer reaches the client, also one given before the request body was read: a 401 or
 * 403 from the auth hook, a 404 for an unknown note before an upload is read, a 415 before
 * parsing, a 413. Closing the connection then, while the client is still sending, makes it see
 * EPIPE or ECONNRESET instead of the answer. So:
 * - a body declared larger than the route's bodyLimit is refused with 413 before anything
 *   else, and the connection is closed once the client has stopped sending (`linger`);
 * - any other unread body is read and dropped, up to the route's bodyLimit, before the
 *   answer is sent, and the connection stays open for the next request;
 * - a body (chunked) that runs past the limit while it is dropped gets 413 instead, and the
 *   connection is closed as above.
 * Registered before the auth hook, so the 413 comes first.
 */
export function registerBodyDraining(app: FastifyInstance, linger: LingerLimits = LINGER_LIMITS): void {
  // Callback hooks where every request passes: an async one costs a promise each time.
  app.addHook('onRequest', (request, _reply, done) => {
    done(declaredLength(request) > bodyLimit(request) ? tooLarge(request) : undefined);
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    // `readableEnded` too: a request injected for tests (light-my-request) is never `complete`.
    if (request.raw.complete || request.raw.readableEnded) return done(null, payload);
    drainThenAnswer(request, reply, payload, linger).then(
      (answer) => done(null, answer),
      (error: Error) => done(error),
    );
  });
}

/** The onSend hook's answer once the unread body is dropped: `payload`, or a 413 if it ran over. */
async function drainThenAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  linger: LingerLimits,
): Promise<unknown> {
  const limit = bodyLimit(request);
  if (!(declaredLength(request) > limit) && (await discardBody(request.raw, { bytes: limit })))
    return payload;
  answerThenLinger(request.raw, reply, linger);
  if (reply.statusCode === 413) return payload;
  const error = tooLarge(request);
  reply.code(413).type('application/json; charset=utf-8');
  return JSON.stringify(errorBody(error.statusCode, error.code, error.message));
}
