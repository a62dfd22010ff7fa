import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { sql } from 'kysely';
import { CHANNEL } from '../src/features/live/bus.js';
import { MAX_SESSIONS_PER_USER } from '../src/features/mcp/service.js';
import { createApiKey, createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { createNote, type EventStream, edit, openEvents } from './helpers/events.js';
import { onPostgres } from './helpers/postgres.js';
import { testRedisUrl } from './helpers/redis.js';
import { startServer, type TestServer, withServerProcesses } from './helpers/server.js';

/** Long enough for an update that would come (they come within milliseconds on loopback). */
const QUIET_MS = 400;
const RESOURCE_NOT_FOUND = -32002;

/** An SDK client over a real socket, with the resources it was told were updated. */
interface Subscriber {
  client: Client;
  transport: StreamableHTTPClientTransport;
  updates: string[];
  /** Waits until `uri` was updated (from the `from`-th update on). */
  updated(uri: string, from?: number): Promise<void>;
  close(): Promise<void>;
}

async function subscriber(baseUrl: string, key: string): Promise<Subscriber> {
  const transport = new StreamableHTTPClientTransport(new URL('/api/mcp', baseUrl), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'subscriber', version: '1.0.0' });
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    updates.push(notification.params.uri);
  });
  await client.connect(transport);
  return {
    client,
    transport,
    updates,
    async updated(uri, from = 0) {
      const started = Date.now();
      while (!updates.slice(from).includes(uri)) {
        assert.ok(Date.now() - started < 3_000, `no update of ${uri}; got ${JSON.stringify(updates)}`);
        await sleep(10);
      }
    },
    close: () => client.close(),
  };
}

const uriOf = (noteId: string) => `note://${noteId}`;

async function assertNotFound(work: Promise<unknown>): Promise<void> {
  await assert.rejects(work, (err: unknown) => err instanceof McpError && err.code === RESOURCE_NOT_FOUND);
}

/** A raw POST /api/mcp. */
function rawPost(baseUrl: string, key: string, body: unknown, sessionId?: string) {
  return fetch(new URL('/api/mcp', baseUrl), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** A session opened by a raw initialize: unlike the SDK's client, it opens no stream by itself. */
async function rawSession(baseUrl: string, key: string): Promise<string> {
  const response = await rawPost(baseUrl, key, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  assert.equal(response.status, 200);
  return response.headers.get('mcp-session-id')!;
}

async function listToolsStatus(baseUrl: string, key: string, sessionId: string): Promise<number> {
  const response = await rawPost(baseUrl, key, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId);
  await response.arrayBuffer();
  return response.status;
}

/** The raw GET /api/mcp stream of a session, for the status codes and ends the SDK hides. */
function openUpdates(baseUrl: string, key: string, sessionId?: string, accept = 'text/event-stream') {
  return openEvents(
    baseUrl,
    {
      authorization: `Bearer ${key}`,
      accept,
      ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
    },
    '/api/mcp',
  );
}

/** Waits until `stream` ends, failing past 5 s. */
async function endsWithinSeconds(stream: EventStream): Promise<void> {
  const timeout = sleep(5_000).then(() => assert.fail('the stream outlived its session by 5 s'));
  await Promise.race([stream.ended, timeout]);
}

describe('MCP resource subscriptions (decision 0045)', () => {
  let server: TestServer;
  let owner: TestClient;
  let ownerKey: string;
  let alice: { client: TestClient; userId: number };
  let aliceKey: string;
  let malloryKey: string;
  const streams = () => server.app.services.live.openStreams();

  /** A subscriber whose update stream is open (the SDK opens it after initialize). */
  async function listening(key: string): Promise<Subscriber> {
    const before = streams();
    const sub = await subscriber(server.url, key);
    while (streams() === before) await sleep(10);
    return sub;
  }

  before(async () => {
    server = await startServer({ env: { EVENTS_MAX_STREAMS_PER_USER: '4' } });
    owner = await setupOwner(server);
    alice = await createUserClient(server, 'alice@example.com', undefined, owner);
    const mallory = await createUserClient(server, 'mallory@example.com', undefined, owner);
    ownerKey = (await createApiKey(owner)).key;
    aliceKey = (await createApiKey(alice.client)).key;
    malloryKey = (await createApiKey(mallory.client)).key;
  });
  after(() => server.close());

  it('announces resources.subscribe; a subscribed note updated by REST is notified, others not', async () => {
    const sub = await listening(ownerKey);
    try {
      assert.equal(sub.client.getServerCapabilities()?.resources?.subscribe, true);
      const watched = await createNote(owner, 'watched');
      const other = await createNote(owner, 'not watched');
      await sub.client.subscribeResource({ uri: uriOf(watched) });
      await edit(owner, watched, 'edited by REST');
      await sub.updated(uriOf(watched));
      await edit(owner, other, 'also edited');
      // Counted before the write: its notification may come before its answer.
      let from = sub.updates.length;
      assert.equal((await owner.patch(`/api/notes/${watched}`, { trashed: true })).status, 200);
      await sub.updated(uriOf(watched), from);
      await sleep(QUIET_MS);
      assert.ok(!sub.updates.includes(uriOf(other)), `told of an unsubscribed note: ${sub.updates}`);

      from = sub.updates.length;
      assert.equal((await owner.delete(`/api/notes/${watched}`)).status, 200);
      await sub.updated(uriOf(watched), from);
      await assertNotFound(sub.client.readResource({ uri: uriOf(watched) }));
    } finally {
      await sub.close();
    }
  });

  it('a collaborator hears of the note until it is unshared, then once more, and reading it is not found', async () => {
    const noteId = await createNote(owner, 'shared');
    // Hints reach a stream in the order of their writes: once an edit of this note is heard,
    // every hint before it has been (a late one would be counted against the next step).
    const marker = await createNote(owner, 'marker');
    for (const id of [noteId, marker])
      assert.equal(
        (await owner.post(`/api/notes/${id}/collaborators`, { userId: alice.userId })).status,
        201,
      );
    const sub = await listening(aliceKey);
    const heardAllBefore = async () => {
      const from = sub.updates.length;
      await edit(owner, marker, `marker ${from}`);
      await sub.updated(uriOf(marker), from);
      return sub.updates.length;
    };
    try {
      for (const id of [noteId, marker]) await sub.client.subscribeResource({ uri: uriOf(id) });
      await edit(owner, noteId, 'milk');
      await sub.updated(uriOf(noteId));
      let from = await heardAllBefore();
      const removed = await owner.delete(`/api/notes/${noteId}/collaborators?userId=${alice.userId}`);
      assert.equal(removed.status, 200, removed.text);
      await sub.updated(uriOf(noteId), from);
      await assertNotFound(sub.client.readResource({ uri: uriOf(noteId) }));
      from = await heardAllBefore();
      await edit(owner, noteId, 'after removal');
      await heardAllBefore();
      assert.deepEqual(
        sub.updates.slice(from).filter((uri) => uri === uriOf(noteId)),
        [],
      );
    } finally {
      await sub.close();
    }
  });

  it("refuses a subscription to another user's note as not found, like a missing one, and never tells of it", async () => {
    const secret = await createNote(owner, 'secret');
    const sub = await listening(malloryKey);
    try {
      await assertNotFound(sub.client.subscribeResource({ uri: uriOf(secret) }));
      const missing = '00000000-0000-4000-8000-000000000000';
      const [hidden, absent] = await Promise.all(
        [secret, missing].map((id) =>
          sub.client.subscribeResource({ uri: uriOf(id) }).then(
            () => 'subscribed',
            (err: McpError) => err.message.replace(id, 'ID'),
          ),
        ),
      );
      assert.equal(hidden, absent, 'a hidden note and a missing one must look alike');
      await assertNotFound(sub.client.subscribeResource({ uri: 'file:///etc/passwd' }));
      // Even a subscription row for it (as if once visible) tells her nothing: the hints
      // reaching her stream are only of notes she can see.
      await server.app.db
        .insertInto('mcp_subscriptions')
        .values({ session_id: sub.transport.sessionId!, note_id: secret })
        .execute();
      await edit(owner, secret, 'still secret');
      await sleep(QUIET_MS);
      assert.deepEqual(sub.updates, []);
    } finally {
      await sub.close();
    }
  });

  it('unsubscribe stops the updates; another session of the same key hears only its own subscriptions', async () => {
    const noteId = await createNote(owner, 'unsubscribed later');
    const sub = await listening(ownerKey);
    const otherSession = await listening(ownerKey);
    try {
      await sub.client.subscribeResource({ uri: uriOf(noteId) });
      await edit(owner, noteId, 'one');
      await sub.updated(uriOf(noteId));
      await sub.client.unsubscribeResource({ uri: uriOf(noteId) });
      const from = sub.updates.length;
      await edit(owner, noteId, 'two');
      await sleep(QUIET_MS);
      assert.deepEqual(sub.updates.slice(from), []);
      assert.deepEqual(otherSession.updates, []);
    } finally {
      await sub.close();
      await otherSession.close();
    }
  });

  it('GET is a stream only for text/event-stream and a session of this key: else 405 (D-MCP-1), 400, 404', async () => {
    const sessionId = await rawSession(server.url, ownerKey);
    const notAccepted = await openUpdates(server.url, ownerKey, sessionId, 'application/json');
    assert.equal(notAccepted.status, 405);
    assert.equal(notAccepted.headers.allow, 'POST, DELETE');
    const noSession = await openUpdates(server.url, ownerKey);
    assert.equal(noSession.status, 405);
    assert.equal(noSession.headers.allow, 'POST, DELETE');
    assert.equal((await openUpdates(server.url, ownerKey, 'not a session')).status, 400);
    assert.equal((await openUpdates(server.url, aliceKey, sessionId)).status, 404);
    assert.equal(
      (await openUpdates(server.url, ownerKey, '00000000-0000-4000-8000-000000000000')).status,
      404,
    );
  });

  it('a second stream of a session replaces the first; past the per-user stream limit, 429', async () => {
    const { key } = await createApiKey(alice.client);
    const sessionId = await rawSession(server.url, key);
    const first = await openUpdates(server.url, key, sessionId);
    assert.equal(first.status, 200);
    const second = await openUpdates(server.url, key, sessionId);
    assert.equal(second.status, 200);
    await endsWithinSeconds(first);
    // EVENTS_MAX_STREAMS_PER_USER is 4 here, and counts MCP streams too.
    const open: EventStream[] = [second];
    try {
      for (let i = 0; i < 3; i++) {
        open.push(await openUpdates(server.url, key, await rawSession(server.url, key)));
        assert.equal(open.at(-1)!.status, 200);
      }
      assert.equal((await openUpdates(server.url, key, await rawSession(server.url, key))).status, 429);
    } finally {
      for (const stream of open) stream.close();
    }
  });

  it(`keeps at most ${MAX_SESSIONS_PER_USER} sessions per user: opening another ends the least recently used`, async () => {
    const { key } = await createApiKey(alice.client);
    const { key: otherKey } = await createApiKey(alice.client);
    const keyOf = (i: number) => (i % 2 ? key : otherKey);
    const sessions: string[] = [];
    for (let i = 0; i < MAX_SESSIONS_PER_USER; i++) {
      sessions.push(await rawSession(server.url, keyOf(i)));
      await sleep(2);
    }
    // Sessions are used at most once a minute as far as the database knows: age them apart.
    for (const [i, id] of sessions.entries()) {
      await server.app.db
        .updateTable('mcp_sessions')
        .set({ last_used_at: Date.now() - 10 * 60_000 + i * 1_000 })
        .where('id', '=', id)
        .execute();
    }
    // The oldest is used now: the next session ends the one used least recently instead.
    assert.equal(await listToolsStatus(server.url, keyOf(0), sessions[0]!), 200);
    const newest = await rawSession(server.url, otherKey);
    assert.equal(await listToolsStatus(server.url, keyOf(1), sessions[1]!), 404);
    assert.equal(await listToolsStatus(server.url, keyOf(0), sessions[0]!), 200);
    assert.equal(await listToolsStatus(server.url, otherKey, newest), 200);
    const count = await server.app.db
      .selectFrom('mcp_sessions')
      .innerJoin('api_keys', 'api_keys.id', 'mcp_sessions.key_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('api_keys.user_id', '=', alice.userId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), MAX_SESSIONS_PER_USER);
  });

  it('an open stream keeps its session from going idle', async () => {
    const sessionId = await rawSession(server.url, ownerKey);
    const usedAt = () =>
      server.app.db
        .selectFrom('mcp_sessions')
        .select('last_used_at')
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow()
        .then((row) => Number(row.last_used_at));
    const stream = await openUpdates(server.url, ownerKey, sessionId);
    try {
      const longAgo = Date.now() - 60 * 60_000;
      await server.app.db
        .updateTable('mcp_sessions')
        .set({ last_used_at: longAgo })
        .where('id', '=', sessionId)
        .execute();
      const started = Date.now();
      while ((await usedAt()) === longAgo) {
        assert.ok(Date.now() - started < 5_000, 'the session was not kept alive');
        await sleep(100);
      }
      assert.ok((await usedAt()) >= started - 1_000);
    } finally {
      stream.close();
    }
  });

  it('ends the stream within seconds of DELETE, of its key being revoked, or of its session going idle', async () => {
    const { id, key } = await createApiKey(owner);
    const ended = await rawSession(server.url, key);
    const revoked = await rawSession(server.url, key);
    const idle = await rawSession(server.url, ownerKey);
    const endedStream = await openUpdates(server.url, key, ended);
    const revokedStream = await openUpdates(server.url, key, revoked);
    const idleStream = await openUpdates(server.url, ownerKey, idle);
    try {
      for (const stream of [endedStream, revokedStream, idleStream]) assert.equal(stream.status, 200);

      const deleted = await fetch(new URL('/api/mcp', server.url), {
        method: 'DELETE',
        headers: { authorization: `Bearer ${key}`, 'mcp-session-id': ended },
      });
      assert.equal(deleted.status, 200);
      await endsWithinSeconds(endedStream);

      assert.equal((await owner.delete(`/api/settings/api-keys/${id}`)).status, 200);
      await endsWithinSeconds(revokedStream);

      await server.app.db
        .updateTable('mcp_sessions')
        .set({ last_used_at: Date.now() - 24 * 60 * 60 * 1000 - 1 })
        .where('id', '=', idle)
        .execute();
      await endsWithinSeconds(idleStream);
    } finally {
      for (const stream of [endedStream, revokedStream, idleStream]) stream.close();
    }
  });
});

describe('MCP resource subscriptions when hints may have been lost', {
  skip: !onPostgres && 'needs TEST_DATABASE_URL',
}, () => {
  it("notifies every subscribed note once the bus's LISTEN connection is back", async () => {
    const server = await startServer();
    try {
      const owner = await setupOwner(server);
      const { key } = await createApiKey(owner);
      const watched = await createNote(owner, 'watched');
      const other = await createNote(owner, 'not watched');
      const sessionId = await rawSession(server.url, key);
      const subscribed = await rawPost(
        server.url,
        key,
        { jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: { uri: uriOf(watched) } },
        sessionId,
      );
      assert.equal(subscribed.status, 200, await subscribed.text());
      const stream = await openUpdates(server.url, key, sessionId);
      try {
        // The listener's connection breaks: what was published meanwhile is unknown.
        const { rows } = await sql<{ pid: number }>`
          SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity
          WHERE datname = current_database() AND query = ${`LISTEN ${CHANNEL}`}`.execute(server.app.db);
        assert.equal(rows.length, 1);
        await stream.next((event) => event.data.includes(uriOf(watched)), 10_000);
        assert.ok(!stream.text().includes(other));
      } finally {
        stream.close();
      }
    } finally {
      await server.close();
    }
  });
});

/**
 * Two server processes on one PostgreSQL database: a session opened and subscribed on one
 * process, its update stream on the other, hears a write made on the first, through
 * LISTEN/NOTIFY or Redis pub/sub.
 */
for (const bus of ['PostgreSQL LISTEN/NOTIFY', 'Redis pub/sub'] as const) {
  const redis = bus === 'Redis pub/sub';
  describe(`MCP resource subscriptions across 2 processes (${bus})`, {
    skip: (!onPostgres && 'needs TEST_DATABASE_URL') || (redis && !testRedisUrl && 'needs TEST_REDIS_URL'),
  }, () => {
    it('a subscription made on one process is notified on the stream held by the other', async () => {
      await withServerProcesses(
        2,
        async ([one, two]) => {
          const owner = await setupOwner(one!.url);
          const { key } = await createApiKey(owner);
          const sub = await subscriber(one!.url, key);
          const noteId = await createNote(owner, 'across processes');
          await sub.client.subscribeResource({ uri: uriOf(noteId) });
          const stream = await openUpdates(two!.url, key, sub.transport.sessionId);
          try {
            assert.equal(stream.status, 200);
            const named = (event: { data: string }) => event.data.includes(uriOf(noteId));
            let heard = false;
            for (let attempt = 0; attempt < 10 && !heard; attempt++) {
              const from = stream.events.length;
              await edit(owner, noteId, `attempt ${attempt}`);
              heard = await stream.next(named, 1_000, from).then(
                () => true,
                () => false,
              );
            }
            assert.ok(heard, `no update crossed between the processes: ${stream.text()}`);
            const message = JSON.parse(stream.events.find(named)!.data);
            assert.deepEqual(message, {
              jsonrpc: '2.0',
              method: 'notifications/resources/updated',
              params: { uri: uriOf(noteId) },
            });
          } finally {
            stream.close();
            await sub.close();
          }
        },
        { envOf: (): Record<string, string> => (redis ? { REDIS_URL: testRedisUrl! } : {}) },
      );
    });
  });
}
