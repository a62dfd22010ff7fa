import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { sessionActor } from '../src/actor.js';
import { MAX_CONTENT_LENGTH } from '../src/shared/api/limits.js';
import { createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

/** The notes of one big list take minutes to write and read on a loaded two-core machine. */
const SLOW = { timeout: 600_000 };

/** Reads a response as it streams, keeping only its size and both ends: the body may be 540 MB. */
async function streamedSize(client: TestClient, path: string) {
  const headers: Record<string, string> = {
    cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
  };
  const response = await fetch(new URL(path, client.baseUrl), { headers });
  let bytes = 0;
  let head = '';
  let last = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    if (head.length < 20) head += Buffer.from(chunk.subarray(0, 20)).toString();
    bytes += chunk.length;
    last = chunk[chunk.length - 1]!;
  }
  return { status: response.status, bytes, head, last: String.fromCharCode(last) };
}

/**
 * Notes of the largest content, 1,000,000 characters that JSON escapes to 6 each (`\u0001`): 90
 * of them are 540 million characters of JSON, more than V8 allows in one string (536.9 million),
 * so a list of them cannot be serialized at once (the 500 `RangeError: Invalid string length`
 * of 283 shared notes of 1,000,000 `"`). The attacker's notes are made through the services,
 * as the API would, to spare the test parsing 540 MB of request bodies.
 */
describe('lists of huge notes shared with a user', () => {
  const HUGE_NOTES = 90;
  /** Shared with the second victim too, for the pull and search: their rounds, not their size. */
  const ALSO_SHARED = 10;
  let server: TestServer;
  let victim: TestClient;
  let second: TestClient;
  let oneNote: string;
  let queries: string[] = [];

  before(async () => {
    server = await startServer({ onQuery: (sql) => queries.push(sql) });
    await setupOwner(server.url);
    const attacker = await createUserClient(server, 'attacker@example.com');
    const target = await createUserClient(server, 'victim@example.com');
    const other = await createUserClient(server, 'second@example.com');
    victim = target.client;
    second = other.client;
    const { notes, collaborators } = server.app.services;
    const actor = sessionActor({ id: attacker.userId, is_owner: 0 });
    const content = '\u0001'.repeat(MAX_CONTENT_LENGTH);
    const ids: string[] = [];
    for (let n = 0; n < HUGE_NOTES; n++) {
      const { id } = await notes.create(actor, { title: 'huge', content });
      ids.push(id);
      await collaborators.add(actor, id, target.userId);
      if (n < ALSO_SHARED) await collaborators.add(actor, id, other.userId);
    }
    oneNote = (await victim.get(`/api/notes/${ids[0]}`)).text;
  }, SLOW);
  after(() => server.close());

  /** The whole array: every note serializes to the same length (same title, content, id length). */
  const expectedBytes = (count: number) => count * Buffer.byteLength(oneNote) + (count - 1) + 2;

  /** The queries that read note rows by id: one per batch. */
  const rounds = () => queries.filter((sql) => /^select .* from "notes" as "n" where "n"."id" in/.test(sql));

  async function assertWholeList(client: TestClient, path: string, count: number) {
    queries = [];
    const answer = await streamedSize(client, path);
    assert.equal(answer.status, 200);
    assert.equal(answer.head.slice(0, 8), '[{"id":"');
    assert.equal(answer.last, ']');
    assert.equal(answer.bytes, expectedBytes(count));
    // Rows are read by size, not only by count: 4 MiB a round is 4 of these notes.
    assert.ok(rounds().length >= count / 4, `${rounds().length} rounds`);
  }

  it('GET /api/notes answers all 540 MB of them, 200, reading the notes a few MB at a time', SLOW, () =>
    assertWholeList(victim, '/api/notes', HUGE_NOTES),
  );

  for (const path of ['/api/sync?since=0', '/api/search?q=huge&limit=1000']) {
    it(`GET ${path} reads and sends them the same way`, SLOW, () =>
      assertWholeList(second, path, ALSO_SHARED),
    );
  }
});

/** The time now, comparable between threads: milliseconds since the epoch, sub-millisecond. */
const now = () => performance.timeOrigin + performance.now();

/**
 * Asks /api/health from a worker thread, and says when the answer came: a client with its own
 * event loop, so that only the server's turns of the loop decide it. A fetch from the server's
 * own thread also needs several turns to send and read, and on a fast machine the push was over
 * before it had them.
 */
function healthFromWorker(url: string) {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const now = () => performance.timeOrigin + performance.now();
    const ask = () => fetch(workerData.url + '/api/health').then(async (r) => (await r.arrayBuffer(), r.status));
    // A kept-alive connection first, so that an answer needs no new connection's turns.
    ask().then(() => parentPort.postMessage({ ready: true }));
    parentPort.on('message', async (id) => parentPort.postMessage({ id, status: await ask(), at: now() }));
    `,
    { eval: true, workerData: { url } },
  );
  const answers = new Map<number, (answer: { status: number; at: number }) => void>();
  const ready = new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message) => {
      if (message.ready) resolve();
      else answers.get(message.id)?.(message);
    });
  });
  return {
    ready,
    ask(): Promise<{ status: number; at: number }> {
      const id = answers.size;
      const answer = new Promise<{ status: number; at: number }>((resolve) => answers.set(id, resolve));
      worker.postMessage(id);
      return answer;
    },
    close: () => worker.terminate(),
  };
}

describe('a sync push of 1,000 notes with 1,000 distinct hashtags each', () => {
  // Kysely's statement (PostgreSQL) or the prepared one (SQLite's fast path).
  const NOTE_INSERT = /^insert into "?notes"? \(/i;
  // SQLite writes the documents last, before COMMIT (beforeCommit.ts); PostgreSQL as it goes.
  const DOCUMENT_INSERT = /^\s*insert (or replace )?into notes_(fts \(rowid|search \(doc_id)/i;
  let server: TestServer;
  let health: ReturnType<typeof healthFromWorker>;
  /** /api/health asked at the push's first note insert. */
  let healthDuringPush: Promise<{ status: number; at: number }> | undefined;
  /** When a turn of the event loop queued at the push's first search document ran. */
  let turnDuringDocuments: Promise<number> | undefined;
  let committedAt = Number.POSITIVE_INFINITY;

  before(async () => {
    server = await startServer({
      onQuery: (sql) => {
        if (!healthDuringPush && NOTE_INSERT.test(sql)) healthDuringPush = health.ask();
        if (!turnDuringDocuments && DOCUMENT_INSERT.test(sql)) {
          turnDuringDocuments = new Promise((resolve) => setImmediate(() => resolve(now())));
        }
        if (sql === 'commit' && healthDuringPush && committedAt === Number.POSITIVE_INFINITY)
          committedAt = now();
      },
    });
    health = healthFromWorker(server.url);
    await health.ready;
    const owner = await setupOwner(server.url);
    // The largest batch: its notes take the loop ~0.3 ms each here (SQLite's fast path), their
    // documents ~0.2 ms each, and the health check needs a few turns of it (its storage check
    // waits for the file system twice).
    const changes = Array.from({ length: 1_000 }, (_, n) => ({
      noteId: randomUUID(),
      operation: 'create',
      timestamp: Date.now(),
      data: { title: `n${n}`, content: Array.from({ length: 1_000 }, (_, i) => `#tag${n}_${i}`).join(' ') },
    }));
    const pushed = await owner.post('/api/sync', { changes });
    assert.equal(pushed.status, 200, pushed.text.slice(0, 300));
  });
  after(async () => {
    await health.close();
    await server.close();
  });

  // Without turns of the event loop during the push, health could only answer after its COMMIT.
  it('leaves /api/health answering while the push is applied (one transaction, D-SYNC-4)', async () => {
    const answer = await healthDuringPush;
    assert.ok(answer, 'the push inserted notes');
    assert.equal(answer.status, 200);
    assert.ok(
      answer.at < committedAt,
      `answered ${(answer.at - committedAt).toFixed(0)} ms after the COMMIT`,
    );
  });

  it('lets the event loop turn while it writes the search documents, before its COMMIT', async () => {
    const turnedAt = await turnDuringDocuments;
    assert.ok(turnedAt, 'the push wrote search documents');
    assert.ok(
      turnedAt < committedAt,
      `the loop turned ${(turnedAt - committedAt).toFixed(0)} ms after the COMMIT`,
    );
  });
});
