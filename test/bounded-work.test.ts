import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { MAX_CONTENT_LENGTH } from '../src/features/notes/schemas.js';
import { createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * 283 MB written and 566 MB read per request take minutes on a loaded two-core machine: a limit
 * against hanging, not a measure (the times are reported by `npm run bench`).
 */
const SLOW = { timeout: 600_000 };

/** Reads a response as it streams, keeping only its size and both ends: the body may be 566 MB. */
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

describe('lists of huge notes (a collaborator shares 283 notes of 1,000,000 `"` each)', () => {
  const HUGE_NOTES = 283;
  let server: TestServer;
  let victim: TestClient;
  let oneNote: string;
  let queries: string[] = [];

  before(async () => {
    server = await startServer({ onQuery: (sql) => queries.push(sql) });
    await setupOwner(server.url);
    const attacker = await createUserClient(server, 'attacker@example.com');
    const target = await createUserClient(server, 'victim@example.com');
    victim = target.client;
    // Each note is 2 MB of JSON (`"` is escaped): 7 fit in one 16 MiB push.
    const content = '"'.repeat(MAX_CONTENT_LENGTH);
    const ids = Array.from({ length: HUGE_NOTES }, () => randomUUID());
    for (let start = 0; start < ids.length; start += 7) {
      const changes = ids.slice(start, start + 7).map((noteId) => ({
        noteId,
        operation: 'create',
        timestamp: Date.now(),
        data: { title: 'huge', content },
      }));
      const pushed = await attacker.client.post('/api/sync', { changes });
      assert.equal(pushed.status, 200, pushed.text.slice(0, 300));
    }
    for (const id of ids) {
      const shared = await attacker.client.post(`/api/notes/${id}/collaborators`, { userId: target.userId });
      assert.equal(shared.status, 201, shared.text);
    }
    oneNote = (await victim.get(`/api/notes/${ids[0]}`)).text;
  }, SLOW);
  after(() => server.close());

  /** The whole array: every note serializes to the same length (same title, content, id length). */
  const expectedBytes = () => HUGE_NOTES * Buffer.byteLength(oneNote) + (HUGE_NOTES - 1) + 2;

  for (const path of ['/api/notes', '/api/sync?since=0', '/api/search?q=huge&limit=1000']) {
    it(`GET ${path} answers all of them, 200, reading the notes a few MB at a time`, SLOW, async () => {
      queries = [];
      const answer = await streamedSize(victim, path);
      assert.equal(answer.status, 200);
      assert.equal(answer.head.slice(0, 8), '[{"id":"');
      assert.equal(answer.last, ']');
      assert.equal(answer.bytes, expectedBytes());
      // Rows are read by size, not only by count: 4 MiB a round is 4 of these notes.
      const rounds = queries.filter((sql) => /^select .* from "notes" as "n" where "n"."id" in/.test(sql));
      assert.ok(rounds.length >= HUGE_NOTES / 4, `${rounds.length} rounds`);
    });
  }
});

describe('a sync push of 300 notes with 1,000 distinct hashtags each', () => {
  let server: TestServer;
  /** Set from the push's first note insert until its commit, both seen through onQuery. */
  let pushing = false;
  let healthDuringPush: Promise<{ status: number; beforeCommit: boolean }> | undefined;

  before(async () => {
    server = await startServer({
      onQuery: (sql) => {
        if (!healthDuringPush && sql.startsWith('insert into "notes"')) {
          pushing = true;
          healthDuringPush = fetch(`${server.url}/api/health`).then((r) => ({
            status: r.status,
            beforeCommit: pushing,
          }));
        }
        if (sql === 'commit') pushing = false;
      },
    });
  });
  after(() => server.close());

  it('leaves /api/health answering while the push is applied (one transaction, D-SYNC-4)', async () => {
    const owner = await setupOwner(server.url);
    const changes = Array.from({ length: 300 }, (_, n) => ({
      noteId: randomUUID(),
      operation: 'create',
      timestamp: Date.now(),
      data: { title: `n${n}`, content: Array.from({ length: 1_000 }, (_, i) => `#tag${n}_${i}`).join(' ') },
    }));
    const pushed = await owner.post('/api/sync', { changes });
    assert.equal(pushed.status, 200, pushed.text.slice(0, 300));
    assert.ok(healthDuringPush, 'the push inserted notes');
    // Without turns of the event loop during the push, health could only answer after it.
    assert.deepEqual(await healthDuringPush, { status: 200, beforeCommit: true });
  });
});
