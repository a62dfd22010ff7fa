import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { JSON_BODY_LIMIT } from '../src/app.js';
import { MAX_UPLOAD_BYTES } from '../src/features/attachments/multipart.js';
import { MAX_IMPORT_BYTES } from '../src/features/transfer/service.js';
import type { LingerLimits } from '../src/http/requestBody.js';
import { setupOwner } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

const KiB = 1024;
const MiB = 1024 * KiB;
/**
 * How far past its route's limit each body goes: more than loopback's socket buffers hold, so
 * a server that closes without reading makes the client's writes fail (3 MiB did not).
 */
const EXCESS = 8 * MiB;
const CHUNK = new Uint8Array(256 * KiB);
const BOUNDARY = 'refused-body-boundary';

/** An over-limit request body, made as it is sent (nothing of its size is held in memory). */
interface OverLimit {
  name: string;
  method: string;
  path: string;
  type: string;
  size: number;
  code: string;
  chunks(): Generator<Uint8Array>;
}

function* zeros(size: number): Generator<Uint8Array> {
  for (let left = size; left > 0; left -= CHUNK.length) yield CHUNK.subarray(0, Math.min(left, CHUNK.length));
}

function jsonBody(name: string, method: string, path: string): OverLimit {
  const size = JSON_BODY_LIMIT + EXCESS;
  return {
    name,
    method,
    path,
    type: 'application/json',
    size,
    code: 'payload_too_large',
    chunks: () => zeros(size),
  };
}

/** A multipart form with one `file` part of `fileSize` bytes. */
function formBody(name: string, path: string, fileSize: number, code: string): OverLimit {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  return {
    name,
    method: 'POST',
    path,
    type: `multipart/form-data; boundary=${BOUNDARY}`,
    size: head.length + fileSize + tail.length,
    code,
    *chunks() {
      yield head;
      yield* zeros(fileSize);
      yield tail;
    },
  };
}

/** HTTP/1.1 chunked framing of `chunks`, with its last chunk. */
function* chunked(chunks: Generator<Uint8Array>): Generator<Uint8Array> {
  for (const chunk of chunks) {
    yield Buffer.from(`${chunk.length.toString(16)}\r\n`);
    yield chunk;
    yield Buffer.from('\r\n');
  }
  yield Buffer.from('0\r\n\r\n');
}

function head(server: TestServer, body: OverLimit, cookie: string, encoding: 'length' | 'chunked'): Buffer {
  const length = encoding === 'length' ? `content-length: ${body.size}` : 'transfer-encoding: chunked';
  const lines = [
    `${body.method} ${body.path} HTTP/1.1`,
    `host: ${new URL(server.url).host}`,
    `cookie: ${cookie}`,
    `content-type: ${body.type}`,
    length,
  ];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);
}

const closes = new WeakMap<net.Socket, Promise<false>>();
/** Resolves when the socket closes (`once` would reject on the EPIPE that may come first). */
function closeOf(socket: net.Socket): Promise<false> {
  let closed = closes.get(socket);
  if (!closed) {
    closed = new Promise((resolve) => socket.once('close', () => resolve(false)));
    closes.set(socket, closed);
  }
  return closed;
}

/** Writes `chunks` to `socket` with backpressure; false once the socket fails or closes. */
async function writeAll(socket: net.Socket, chunks: Iterable<Uint8Array>): Promise<boolean> {
  const closed = closeOf(socket);
  for (const chunk of chunks) {
    if (socket.destroyed) return false;
    if (socket.write(chunk)) continue;
    const drained = new Promise<true>((resolve) => socket.once('drain', () => resolve(true)));
    if (!(await Promise.race([drained, closed]))) return false;
  }
  return true;
}

interface RawOutcome {
  /** The status line's code, or undefined when no answer was read. */
  status?: number;
  headers?: Record<string, string>;
  body?: any;
  /** The socket error the client saw (EPIPE, ECONNRESET), if any. */
  error?: string;
  /** Whether every byte of the request was written. */
  sentAll: boolean;
  /** Milliseconds from the last byte written to the server closing the connection (or keeping it). */
  settledAfterMs: number;
}

/** The response in `text` once it is complete. */
function parseResponse(text: string): Pick<RawOutcome, 'status' | 'headers' | 'body'> | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...headerLines] = text.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  const body = text.slice(end + 4);
  if (body.length < Number(headers['content-length'])) return undefined;
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body) };
}

/**
 * The client most likely to lose an early answer: it writes its whole request and reads
 * nothing until the last byte is written (as a blocking client does). Resolves once the
 * server has closed the connection, or has answered and keeps the connection open.
 */
async function sendAllThenRead(
  server: TestServer,
  body: OverLimit,
  cookie: string,
  encoding: 'length' | 'chunked',
): Promise<RawOutcome> {
  const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
  socket.pause();
  let error: string | undefined;
  socket.on('error', (err: NodeJS.ErrnoException) => {
    error ??= err.code;
  });
  let text = '';
  const closed = closeOf(socket);
  const keptOpen = new Promise<void>((resolve) =>
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (parseResponse(text)?.headers?.connection === 'keep-alive') resolve();
    }),
  );
  await once(socket, 'connect');
  const chunks = encoding === 'length' ? body.chunks() : chunked(body.chunks());
  let sentAll = await writeAll(socket, [head(server, body, cookie, encoding)]);
  sentAll &&= await writeAll(socket, chunks);
  // Flushed to the kernel, at least.
  if (sentAll) await new Promise((resolve) => socket.write('', resolve));
  const sentAt = Date.now();
  socket.resume();
  await Promise.race([closed, keptOpen]);
  socket.destroy();
  return { ...parseResponse(text), error, sentAll, settledAfterMs: Date.now() - sentAt };
}

/** Sends `body` with fetch, its length declared or chunked: the status and code, or the network error. */
async function sendWithFetch(
  server: TestServer,
  body: OverLimit,
  cookie: string,
  encoding: 'length' | 'chunked',
): Promise<string> {
  const chunks = body.chunks();
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
  const headers: Record<string, string> = { cookie, 'content-type': body.type };
  if (encoding === 'length') headers['content-length'] = String(body.size);
  try {
    const response = await fetch(`${server.url}${body.path}`, {
      method: body.method,
      headers,
      body: stream,
      duplex: 'half',
    } as RequestInit);
    return `${response.status} ${((await response.json()) as { code: string }).code}`;
  } catch (err) {
    return `network error: ${(err as Error).cause ?? err}`;
  }
}

/** Sends `body` with node:http (length declared): the status and code, or the error. */
function sendWithHttp(server: TestServer, body: OverLimit, cookie: string): Promise<string> {
  return new Promise((resolve) => {
    const request = http.request(
      `${server.url}${body.path}`,
      {
        method: body.method,
        headers: { cookie, 'content-type': body.type, 'content-length': body.size },
        agent: false,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          text += chunk;
        });
        response.on('end', () => resolve(`${response.statusCode} ${JSON.parse(text).code}`));
        response.on('error', (err: NodeJS.ErrnoException) => resolve(`response error: ${err.code}`));
      },
    );
    request.on('error', (err: NodeJS.ErrnoException) => resolve(`network error: ${err.code}`));
    Readable.from(body.chunks()).pipe(request);
  });
}

const tally = (outcomes: string[]) =>
  outcomes.reduce<Record<string, number>>((counts, outcome) => {
    counts[outcome] = (counts[outcome] ?? 0) + 1;
    return counts;
  }, {});

describe('a refused body still gets its answer (lingering close)', () => {
  let server: TestServer;
  let cookie: string;
  let routes: OverLimit[];
  before(async () => {
    server = await startServer();
    const owner = await setupOwner(server.url);
    cookie = [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const noteId = (await owner.post('/api/notes', { title: 'kept' })).body.id;
    routes = [
      jsonBody('JSON POST', 'POST', '/api/notes'),
      jsonBody('JSON PATCH', 'PATCH', `/api/notes/${noteId}`),
      formBody('upload', `/api/notes/${noteId}/attachments`, MAX_UPLOAD_BYTES + EXCESS, 'file_too_large'),
    ];
  });
  after(() => server.close());

  /** The import route's body: over its limit, whatever that is. */
  const importBody = () => formBody('import', '/api/import', MAX_IMPORT_BYTES + EXCESS, 'archive_too_large');

  it('answers 413 to a client that writes its whole body before reading, then closes at once', async () => {
    for (const body of [...routes, importBody()]) {
      for (const encoding of ['length', 'chunked'] as const) {
        // The import route refuses a chunked archive only once it has read it: 256 MiB, once.
        if (body.name === 'import' && encoding === 'chunked') continue;
        for (let i = 0; i < (body.name === 'import' ? 1 : 3); i++) {
          const outcome = await sendAllThenRead(server, body, cookie, encoding);
          const what = `${body.name}, ${encoding}: ${JSON.stringify(outcome)}`;
          assert.equal(outcome.error, undefined, what);
          assert.equal(outcome.sentAll, true, what);
          assert.equal(outcome.status, 413, what);
          assert.equal(outcome.body.code, body.code, what);
          // Closed (or kept) once the body ended, not after waiting for more (5 s).
          assert.ok(outcome.settledAfterMs < 2000, what);
        }
      }
    }
  });

  it('answers 413 to over-limit bodies sent with fetch and node:http, many times', async () => {
    for (const body of routes) {
      const outcomes: string[] = [];
      for (let i = 0; i < 10; i++) {
        outcomes.push(await sendWithFetch(server, body, cookie, i % 2 ? 'length' : 'chunked'));
        outcomes.push(await sendWithHttp(server, body, cookie));
      }
      assert.deepEqual(tally(outcomes), { [`413 ${body.code}`]: 20 }, body.name);
    }
    const body = importBody();
    const outcomes = [
      await sendWithFetch(server, body, cookie, 'length'),
      await sendWithHttp(server, body, cookie),
    ];
    assert.deepEqual(tally(outcomes), { [`413 ${body.code}`]: 2 }, body.name);
  });
});

describe('lingering after a refusal is bounded', () => {
  const linger: LingerLimits = { bytes: 4 * MiB, totalMs: 2000, idleMs: 500 };
  let server: TestServer;
  let cookie: string;
  before(async () => {
    server = await startServer({ linger });
    cookie = [...(await setupOwner(server.url)).cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  });
  after(() => server.close());

  /**
   * Sends a note body declared far over the limit, `data` every `everyMs` (0: as fast as it
   * goes), until the server closes the connection; reads as it goes. The answer, how long the
   * server kept the connection, and how many bytes it read from it.
   */
  async function sendForever(encoding: 'length' | 'chunked', data: Uint8Array, everyMs: number) {
    const accepted = once(server.app.server, 'connection') as Promise<[net.Socket]>;
    // Half-open: it keeps sending after the server's FIN, as a client that ignores the answer does.
    const socket = net.connect({
      port: Number(new URL(server.url).port),
      host: '127.0.0.1',
      allowHalfOpen: true,
    });
    socket.on('error', () => {});
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    const [serverSide] = await accepted;
    let serverClosedAt: number | undefined;
    const serverClosed = new Promise<false>((resolve) =>
      serverSide.once('close', () => {
        serverClosedAt = Date.now();
        resolve(false);
      }),
    );
    const startedAt = Date.now();
    const framed =
      encoding === 'length'
        ? data
        : Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    const declared = { ...jsonBody('JSON POST', 'POST', '/api/notes'), size: 1024 ** 4 };
    await writeAll(socket, [head(server, declared, cookie, encoding)]);
    // A safety stop, so a server that never cuts it off fails the test rather than hangs it.
    const giveUpAt = startedAt + 4 * linger.totalMs;
    while (serverClosedAt === undefined && Date.now() < giveUpAt) {
      if (!(await writeAll(socket, [framed]))) break;
      if (everyMs > 0) await Promise.race([sleep(everyMs, undefined, { ref: false }), serverClosed]);
    }
    await Promise.race([serverClosed, sleep(Math.max(0, giveUpAt - Date.now()), undefined, { ref: false })]);
    socket.destroy();
    return {
      ...parseResponse(text)!,
      elapsedMs: (serverClosedAt ?? Number.POSITIVE_INFINITY) - startedAt,
      serverRead: serverSide.bytesRead,
    };
  }

  it('cuts off a client that sends forever after reading `bytes` more of it', async () => {
    for (const encoding of ['length', 'chunked'] as const) {
      const outcome = await sendForever(encoding, CHUNK, 0);
      assert.equal(outcome.status, 413, encoding);
      assert.equal(outcome.body.code, 'payload_too_large');
      assert.ok(outcome.elapsedMs < linger.totalMs, `${encoding}: ${outcome.elapsedMs}`);
      // A chunked body is refused once the JSON parser and the drain have each read the limit.
      const refusedAfter = encoding === 'length' ? 0 : 2 * JSON_BODY_LIMIT;
      assert.ok(outcome.serverRead >= refusedAfter + linger.bytes, `${encoding}: ${outcome.serverRead}`);
      assert.ok(outcome.serverRead < refusedAfter + linger.bytes + MiB, `${encoding}: ${outcome.serverRead}`);
    }
  });

  it('cuts off a client that trickles forever after `totalMs`', async () => {
    const outcome = await sendForever('length', Buffer.from('x'), 100);
    assert.equal(outcome.status, 413);
    assert.ok(outcome.elapsedMs >= linger.totalMs, String(outcome.elapsedMs));
    assert.ok(outcome.elapsedMs < linger.totalMs + 1500, String(outcome.elapsedMs));
  });

  it('cuts off a client that stops sending after `idleMs`', async () => {
    const outcome = await sendForever('length', Buffer.from('x'), 10 * linger.totalMs);
    assert.equal(outcome.status, 413);
    assert.ok(outcome.elapsedMs >= linger.idleMs, String(outcome.elapsedMs));
    assert.ok(outcome.elapsedMs < linger.totalMs, String(outcome.elapsedMs));
  });
});
