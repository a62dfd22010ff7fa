import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** What the client waits before reconnecting, sent first (EventSource honours it). */
const RETRY_MS = 2_000;
/**
 * A stream whose client reads slower than this many bytes pile up is closed: memory stays
 * bounded, and the client's reconnection gets what it missed (or is told to start afresh).
 */
const MAX_BUFFERED_BYTES = 256 * 1024;

/**
 * A Server-Sent Events response (the WHATWG HTML "server-sent events" format), written by hand
 * over a stream body (decision 0033) so that Fastify's hooks still add their headers (a renewed
 * session cookie, CORS). The caller frames its events; `send()` starts the response.
 */
export function eventStream(reply: FastifyReply) {
  const body = new PassThrough();
  body.write(`retry: ${RETRY_MS}\n\n`);
  reply.raw.on('close', () => body.destroy());
  const write = (text: string): void => {
    if (reply.raw.writableLength + body.writableLength > MAX_BUFFERED_BYTES) body.destroy();
    else body.write(text);
  };
  return {
    write,
    /** A comment line: keeps proxies from closing an idle stream. */
    keepAlive: () => write(':\n\n'),
    end(): void {
      body.end();
    },
    /** `close` runs once the stream is over, whoever ended it. */
    send(close: () => void): FastifyReply {
      body.on('close', close);
      return (
        reply
          .header('content-type', 'text/event-stream; charset=utf-8')
          .header('cache-control', 'no-store')
          // nginx buffers responses unless told otherwise (docs/deploy.md).
          .header('x-accel-buffering', 'no')
          .send(body)
      );
    },
  };
}
