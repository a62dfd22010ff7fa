import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { type TestServer, useOwner, useServer } from './helpers/server.js';

/** The attacker's pace: one byte this often, so the connection is never idle. */
const TRICKLE_MS = 200;
/** The attacker gives up after this many bytes (15 s), so a server that never cuts it off fails the test. */
const MAX_DRIPS = 75;

/**
 * A connection that sends `head` at once and then one byte of `drip` every TRICKLE_MS, never
 * finishing its request. Resolves with everything the server wrote once it closes (or once the
 * attacker gives up and closes it).
 */
function trickle(server: TestServer, head: string, drip = 'a'): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let answer = '';
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      socket.write(head);
      let drips = 0;
      timer = setInterval(() => {
        if (++drips > MAX_DRIPS) socket.destroy();
        else if (socket.writable) socket.write(drip);
      }, TRICKLE_MS);
    });
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') reject(err);
    });
    socket.on('close', () => {
      clearInterval(timer);
      resolve(answer);
    });
  });
}

function postHead(
  server: TestServer,
  target: string,
  headers: Record<string, string>,
  length: number,
): string {
  const lines = Object.entries({
    host: new URL(server.url).host,
    'content-length': String(length),
    ...headers,
  });
  return `POST ${target} HTTP/1.1\r\n${lines.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
}

describe('slow clients (REQUEST_TIMEOUT_SECONDS)', () => {
  const server = useServer({ env: { REQUEST_TIMEOUT_SECONDS: '1' } });
  // Over the socket: the point is that other connections are served while these are held.
  const owner = useOwner(server, { overSocket: true });

  it('cuts off 20 trickling requests with 408 while everyone else is served', {
    timeout: 60_000,
  }, async () => {
    const cookie = [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const noteId = (await owner.post('/api/notes', { title: 'has uploads' })).body.id;
    const json = { cookie, 'content-type': 'application/json' };
    const multipart = { cookie, 'content-type': 'multipart/form-data; boundary=XX' };
    const filePart =
      '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n';
    const held = [
      ...Array.from({ length: 6 }, () =>
        trickle(server, `${postHead(server, '/api/notes', json, 100_000)}{"title":"`),
      ),
      ...Array.from({ length: 4 }, () =>
        trickle(server, `${postHead(server, '/api/sync', json, 100_000)}{"changes":[`),
      ),
      ...Array.from({ length: 4 }, () =>
        trickle(server, postHead(server, `/api/notes/${noteId}/attachments`, multipart, 200_000) + filePart),
      ),
      ...Array.from({ length: 4 }, () =>
        trickle(server, `${postHead(server, '/api/auth/login', json, 100_000)}{"password":"`),
      ),
      // Headers that never end (slowloris).
      ...Array.from({ length: 2 }, () => trickle(server, 'GET /api/health HTTP/1.1\r\nx-slow: ', 'b')),
    ];
    assert.equal(held.length, 20);

    // Meanwhile, other clients are served as usual.
    assert.equal((await owner.get('/api/health')).status, 200);
    assert.equal((await owner.post('/api/notes', { title: 'served' })).status, 201);
    assert.equal((await owner.get('/api/notes')).status, 200);

    for (const answer of await Promise.all(held)) {
      assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      assert.deepEqual(
        { statusCode: body.statusCode, error: body.error, code: body.code },
        { statusCode: 408, error: 'Request Timeout', code: 'request_timeout' },
      );
    }
    // Nothing of the cut-off requests was stored, not even a partial upload.
    const titles = (await owner.get('/api/notes')).body.map((n: { title: string }) => n.title).sort();
    assert.deepEqual(titles, ['has uploads', 'served']);
    assert.deepEqual((await owner.get(`/api/notes/${noteId}/attachments`)).body, []);
    // The upload handlers clean up as they see their connection gone, just after it closed.
    const uploads = path.join(server.dataDir, 'uploads');
    while (fs.readdirSync(uploads).length > 0) await setTimeout(20);
  });
});
