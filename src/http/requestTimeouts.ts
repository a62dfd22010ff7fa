import { type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { ErrorCode } from '../errors.js';
import { errorBody } from './errorHandler.js';

/** Request headers are a few kilobytes: a minute is generous even on the slowest line. */
const HEADERS_TIMEOUT_MS = 60_000;
/** Node's own default for how often it looks for requests past their time. */
const MAX_CHECK_INTERVAL_MS = 30_000;

/** Socket errors Node reports before or outside a route (`clientError`), as D-ERR-1 answers. */
const CLIENT_ERRORS: Record<string, { status: number; code: ErrorCode; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'request_timeout',
    message: 'The request took too long to arrive; send it again on a faster connection',
  },
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'headers_too_large',
    message: 'The request headers are too large',
  },
};
const MALFORMED = { status: 400, code: 'bad_request' as const, message: 'The request is not valid HTTP' };

/**
 * Answers a connection-level error with the D-ERR-1 body, then closes the connection. Nothing
 * is written once a response has started on it (the bytes would corrupt that response).
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // Node's own fallback makes the same check: `_httpMessage` is the response in flight, if any.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const { status, code, message } = CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify(errorBody(status, code, message));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * Slow clients (docs/api.md "Limits"): a request, body included, must arrive within
 * REQUEST_TIMEOUT_SECONDS (its headers within a minute), or the connection is answered 408 and
 * closed. Node checks open requests every half headers-timeout, at most every 30 s, so a
 * request is cut off within that much after its time. Responses are not limited: a slow
 * reader of a long list is held back by backpressure, not by this.
 */
export function requestTimeoutOptions(config: Config): FastifyHttpOptions<Server> {
  const requestTimeout = config.requestTimeoutSeconds * 1000;
  const headersTimeout = Math.min(HEADERS_TIMEOUT_MS, requestTimeout);
  return {
    requestTimeout,
    http: {
      requestTimeout,
      headersTimeout,
      connectionsCheckingInterval: Math.min(MAX_CHECK_INTERVAL_MS, headersTimeout / 2),
    },
    clientErrorHandler: answerClientError,
  };
}

/**
 * A connection that has sent no request yet (a browser's speculative connection, an MCP client's
 * stream reconnecting as it closes) is ended when the server closes. Node 20's close() leaves it
 * open until its headers time out (nodejs/node#63470, fixed in later Node), which held every
 * shutdown for a minute. Connections opened while the server closes are ended at once: it is
 * about to stop listening, and a request on them would only be answered 503.
 */
export function endSilentConnectionsOnClose(app: FastifyInstance): void {
  const silent = new Set<Socket>();
  let closing = false;
  app.server.on('connection', (socket: Socket) => {
    if (closing) return void socket.destroy();
    silent.add(socket);
    socket.once('close', () => silent.delete(socket));
  });
  app.server.on('request', (request: { socket: Socket }) => silent.delete(request.socket));
  app.addHook('preClose', async () => {
    closing = true;
    for (const socket of silent) socket.destroy();
  });
}
