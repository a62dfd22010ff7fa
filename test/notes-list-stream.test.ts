import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import Fastify, { type FastifyInstance } from 'fastify';
import { sendJsonTextArray } from '../src/http/jsonArray.js';
import { jsonArrayPieces } from '../src/jsonArrays.js';
import { listBatches, noteViewBatches } from '../src/model/noteAnswers.js';
import { createUserClient } from './helpers/client.js';
import { isBackgroundQuery, useOwner, useServer } from './helpers/server.js';

describe('GET /api/notes, streamed', () => {
  let queries: string[] = [];

  const server = useServer({ onQuery: (sql) => isBackgroundQuery(sql) || queries.push(sql) });
  const owner = useOwner(server);

  async function countQueries(path: string): Promise<{ count: number; length: number }> {
    queries = [];
    const response = await owner.get(path);
    assert.equal(response.status, 200, response.text);
    return { count: queries.length, length: response.body.length };
  }

  /** Creates notes through one sync push (fast), titles `${prefix} n`. */
  async function pushNotes(count: number, prefix: string): Promise<void> {
    const changes = Array.from({ length: count }, (_, n) => ({
      noteId: randomUUID(),
      operation: 'create',
      timestamp: Date.now(),
      data: { title: `${prefix} ${n}`, content: `#${prefix} text ${n}` },
    }));
    const response = await owner.post('/api/sync', { changes });
    assert.equal(response.status, 200, response.text);
  }

  it('answers [] for an empty list', async () => {
    const response = await owner.get('/api/notes?filter=archived');
    assert.equal(response.status, 200);
    assert.equal(response.text, '[]');
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  });

  it('answers the bytes of the Note schema serializer, in D-NOTE-5 order', async () => {
    const inputs = [
      { title: 'Ünïcödé 日本語 🎉 \u0301', content: 'emoji 👩‍👩‍👧 and #タグ and #café' },
      {
        title: 'quotes " \' and \\ backslash',
        content: 'control \u0001 \u001f \n\t\r and </script> #quotes',
      },
      { title: '', content: '' },
      { title: 'pinned', pinned: true, sortOrder: 5 },
      // A lone surrogate is refused (400, test/unicode-bodies.test.ts); U+FFFD is what it became.
      { title: 'replacement \ufffd end', sortOrder: -1 },
    ];
    for (const input of inputs) assert.equal((await owner.post('/api/notes', input)).status, 201);
    const list = await owner.get('/api/notes?tag=quotes');
    assert.equal(list.body.length, 1);
    const response = await owner.get('/api/notes');
    assert.equal(response.status, 200);
    const ids: string[] = response.body.map((n: { id: string }) => n.id);
    assert.equal(ids.length, inputs.length);
    assert.equal(response.body[0].title, 'pinned');
    // GET /api/notes/{id} answers each note through the same compiled Note schema.
    const each = await Promise.all(ids.map((id) => owner.get(`/api/notes/${id}`)));
    assert.equal(response.text, `[${each.map((r) => r.text).join(',')}]`);
    assert.deepEqual(
      JSON.parse(response.text),
      each.map((r) => r.body),
    );
  });

  it('runs as many queries for 300 notes as for 10 (issue 2: no query per note), also in a sync pull', async () => {
    await pushNotes(10, 'ten');
    const few = await countQueries('/api/notes?tag=ten');
    const fewPulled = await countQueries('/api/sync?since=0');
    await pushNotes(290, 'ten');
    const many = await countQueries('/api/notes?tag=ten');
    const manyPulled = await countQueries('/api/sync?since=0');
    assert.equal(few.length, 10);
    assert.equal(many.length, 300);
    assert.equal(many.count, few.count);
    assert.equal(manyPulled.length, fewPulled.length + 290);
    assert.equal(manyPulled.count, fewPulled.count);
  });

  it('streams GET /api/sync as the Note schema serializes it, oldest change first (D-SYNC-1)', async () => {
    const response = await owner.get('/api/sync?since=0');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('x-sync-time') ?? '', /^\d+$/);
    const ids: string[] = response.body.map((n: { id: string }) => n.id);
    const each = await Promise.all(ids.slice(0, 5).map((id) => owner.get(`/api/notes/${id}`)));
    assert.ok(response.text.startsWith(`[${each.map((r) => r.text).join(',')},`));
    const times = response.body.map((n: { updatedAt: string }) => n.updatedAt);
    assert.deepEqual(times, [...times].sort());
  });

  it('reads a list in batches, in the order of its ids, leaving out notes the user cannot see', async () => {
    await pushNotes(7, 'batch');
    const ids: string[] = (await owner.get('/api/notes?tag=batch')).body.map((n: { id: string }) => n.id);
    const { client: stranger } = await createUserClient(server, 'batches@example.com');
    const theirs = (await stranger.post('/api/notes', { title: 'not yours' })).body.id as string;
    const batches: string[][] = [];
    const requested = [...ids.slice(0, 3), theirs, ...ids.slice(3, 7)].map((id) => ({ id, bytes: 10 }));
    for await (const batch of noteViewBatches(server.app.db, 1, requested, { notes: 3, bytes: 1_000 })) {
      batches.push(batch.map((n) => n.id));
    }
    assert.deepEqual(
      batches.map((b) => b.length),
      [3, 2, 2],
    );
    assert.deepEqual(batches.flat(), ids.slice(0, 7));
  });
});

describe('listBatches', () => {
  const listed = (...sizes: number[]) => sizes.map((bytes, n) => ({ id: `n${n}`, bytes }));
  const cut = (sizes: number[], limits: { notes: number; bytes: number }) =>
    [...listBatches(listed(...sizes), limits)].map((batch) => batch.length);

  it('cuts by count and by bytes, a note larger than the byte limit alone', () => {
    assert.deepEqual(cut([1, 1, 1, 1, 1], { notes: 2, bytes: 100 }), [2, 2, 1]);
    assert.deepEqual(cut([40, 40, 40, 150, 10, 90, 10], { notes: 10, bytes: 100 }), [2, 1, 1, 2, 1]);
    assert.deepEqual(cut([], { notes: 10, bytes: 100 }), []);
  });

  it('keeps every note once, in order, whatever the sizes (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(1_000)),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 2_000 }),
        (sizes, notes, bytes) => {
          const batches = [...listBatches(listed(...sizes), { notes, bytes })];
          assert.deepEqual(batches.flat(), listed(...sizes));
          for (const batch of batches) {
            const total = batch.reduce((sum, note) => sum + note.bytes, 0);
            assert.ok(batch.length >= 1 && batch.length <= notes);
            assert.ok(batch.length === 1 || total <= bytes);
          }
        },
      ),
    );
  });
});

/** An item as the list sends it: UTF-8 JSON. */
const encode = (item: unknown) => Buffer.from(JSON.stringify(item));

/** The whole array jsonArrayPieces makes of `batches`, as text. */
async function arrayText<T>(
  batches: AsyncIterable<readonly T[]>,
  encodeItem: (item: T) => Buffer,
): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const pieces of jsonArrayPieces(batches, encodeItem)) chunks.push(...pieces);
  return Buffer.concat(chunks).toString();
}

describe('sendJsonTextArray', () => {
  let app: FastifyInstance;
  let url: string;
  let finished = false;
  const logLines: string[] = [];

  async function* slowForever() {
    try {
      for (let n = 0; ; n++) {
        yield [encode({ n, s: 'x'.repeat(10_000) })];
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      finished = true;
    }
  }

  /** `afterBatches` batches of one item of about `itemBytes`, then a failed query. */
  async function* failing(afterBatches: number, itemBytes = 10) {
    for (let n = 0; n < afterBatches; n++) yield [encode({ n, s: 'x'.repeat(itemBytes) })];
    throw new Error('query failed');
  }

  async function* items(count: number, itemBytes: number) {
    for (let n = 0; n < count; n++) yield [encode({ n, s: 'x'.repeat(itemBytes) })];
  }

  before(async () => {
    app = Fastify({
      logger: { level: 'warn', stream: { write: (line: string) => logLines.push(line) } },
      forceCloseConnections: true,
    });
    app.get('/forever', async (_request, reply) => sendJsonTextArray(reply, slowForever()));
    app.get('/fails-first', async (_request, reply) => sendJsonTextArray(reply, failing(0)));
    app.get('/fails-early', async (_request, reply) => sendJsonTextArray(reply, failing(2)));
    app.get('/fails-later', async (_request, reply) => sendJsonTextArray(reply, failing(15, 40_000)));
    app.get('/small', async (_request, reply) => sendJsonTextArray(reply, items(100, 300)));
    app.get('/large', async (_request, reply) => sendJsonTextArray(reply, items(60, 10_000)));
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => app.close());

  it('joins batches into one array, skipping empty batches, as JSON.stringify would', async () => {
    const batches = async function* () {
      yield [];
      yield [{ a: 'é"\\' }, { a: '' }];
      yield [];
      yield [{ a: '🎉' }];
    };
    assert.equal(await arrayText(batches(), encode), JSON.stringify([{ a: 'é"\\' }, { a: '' }, { a: '🎉' }]));
    assert.equal(await arrayText((async function* () {})(), encode), '[]');
  });

  it('lets the event loop turn while it serializes, even when nothing pushes back', async () => {
    // Each item costs 30 ms of CPU, more than a list's slice: a long list must let other
    // callbacks (other requests' I/O) run in between, although this reader never waits.
    const slowEncode = (item: { a: number }) => {
      const until = performance.now() + 30;
      while (performance.now() < until);
      return encode(item);
    };
    const batches = async function* () {
      yield [{ a: 1 }, { a: 2 }];
      yield [{ a: 3 }];
    };
    let otherWorkRan = false;
    setImmediate(() => {
      otherWorkRan = true;
    });
    const text = await arrayText(batches(), slowEncode);
    assert.ok(otherWorkRan, 'no other callback ran while the list was serialized');
    assert.equal(text, JSON.stringify([{ a: 1 }, { a: 2 }, { a: 3 }]));
  });

  it('holds at most one big item in a chunk, never a batch of them', async () => {
    const big = { a: 'x'.repeat(100_000) };
    const oneBatch = async function* () {
      yield [big, big, big];
    };
    const chunks: Buffer[] = [];
    // Each group as the stream sends it: joined into one chunk.
    for await (const pieces of jsonArrayPieces(oneBatch(), encode)) chunks.push(Buffer.concat(pieces));
    assert.equal(Buffer.concat(chunks).toString(), JSON.stringify([big, big, big]));
    assert.ok(
      chunks.every((chunk) => chunk.length < 2 * big.a.length),
      chunks.map((c) => c.length).join(),
    );
  });

  it('answers an error response when the batches fail before the first byte', async () => {
    const response = await fetch(`${url}/fails-first`);
    assert.equal(response.status, 500);
  });

  it('sends an array that ends within its first 512 KiB whole, with its length', async () => {
    const response = await fetch(`${url}/small`);
    assert.equal(response.headers.get('transfer-encoding'), null);
    const text = await response.text();
    assert.equal(response.headers.get('content-length'), String(Buffer.byteLength(text)));
    assert.equal(JSON.parse(text).length, 100);
  });

  it('streams a longer array in chunks', async () => {
    const response = await fetch(`${url}/large`);
    assert.equal(response.headers.get('transfer-encoding'), 'chunked');
    assert.equal(response.headers.get('content-length'), null);
    const parsed = JSON.parse(await response.text());
    assert.deepEqual(
      parsed.map((item: { n: number }) => item.n),
      [...Array(60).keys()],
    );
  });

  it('answers an error response when the batches fail before 512 KiB are ready', async () => {
    const response = await fetch(`${url}/fails-early`);
    assert.equal(response.status, 500);
    assert.doesNotMatch(await response.text(), /"n":/);
  });

  it('breaks the connection, never ending the array, when the batches fail later', async () => {
    const response = await fetch(`${url}/fails-later`);
    assert.equal(response.status, 200);
    await assert.rejects(response.text());
    assert.ok(
      logLines.some((line) => line.includes('query failed')),
      'the failure is logged',
    );
  });

  it('stops reading batches when the client goes away', async () => {
    const controller = new AbortController();
    const response = await fetch(`${url}/forever`, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    for (let waited = 0; !finished && waited < 5_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(finished, true);
  });
});
