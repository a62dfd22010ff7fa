import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { CHANNEL } from '../src/features/live/bus.js';
import { createApiKey, createUserClient, setupOwner, TestClient } from './helpers/client.js';
import {
  createNote,
  type EventStream,
  edit,
  idsOf,
  naming,
  openEvents,
  type ReceivedEvent,
} from './helpers/events.js';
import { onPostgres } from './helpers/postgres.js';
import { privateRedisMissing, startPrivateRedis, testRedisUrl } from './helpers/redis.js';
import { ManualClock, startServer, type TestServer, waitFor, withServerProcesses } from './helpers/server.js';

/** Long enough for a hint that would come (they come within milliseconds on loopback). */
const QUIET_MS = 400;

/** Waits QUIET_MS, then checks that the stream named none of `noteIds`, in any field. */
async function heardNothingOf(stream: EventStream, ...noteIds: string[]): Promise<void> {
  await sleep(QUIET_MS);
  for (const id of noteIds)
    assert.ok(!stream.text().includes(id), `the stream named ${id}: ${stream.text()}`);
}

describe('GET /api/events', () => {
  let server: TestServer;
  let owner: TestClient;
  let alice: { client: TestClient; userId: number };
  let stranger: { client: TestClient; userId: number };
  const streams: EventStream[] = [];
  const open = async (target: TestClient | string, headers?: Record<string, string>) => {
    const stream = await openEvents(target, headers);
    streams.push(stream);
    return stream;
  };

  before(async () => {
    server = await startServer({ env: { EVENTS_MAX_STREAMS_PER_USER: '4' } });
    owner = await setupOwner(server.url);
    alice = await createUserClient(server, 'alice@example.com', undefined, owner);
    stranger = await createUserClient(server, 'mallory@example.com', undefined, owner);
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await server.close();
  });

  it('answers 401 without credentials, and a stream that starts at once with a session or a key', async () => {
    const anonymous = await open(server.url);
    assert.equal(anonymous.status, 401);
    await anonymous.ended;
    const badKey = await open(server.url, { authorization: 'Bearer nope' });
    assert.equal(badKey.status, 401);

    const stream = await open(owner);
    assert.equal(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    assert.equal(stream.headers['cache-control'], 'no-store');
    assert.equal(stream.headers['x-accel-buffering'], 'no');
    // The first bytes come before any event: proxies and clients see a live response.
    const started = Date.now();
    while (!stream.text().startsWith('retry: ')) {
      assert.ok(Date.now() - started < 2_000, 'no first bytes');
      await sleep(10);
    }
    const { key } = await createApiKey(owner, ['notes:read']);
    const byKey = await open(server.url, { authorization: `Bearer ${key}` });
    assert.equal(byKey.status, 200);
    const noteId = await createNote(owner, 'heard by a read-only key');
    await byKey.next(naming(noteId));
    byKey.close();
    stream.close();
  });

  it('tells every device of a user which note changed: created, edited, trashed, deleted', async () => {
    const phone = await open(owner);
    const laptop = await open(owner);
    const noteId = await createNote(owner, 'shopping');
    for (const device of [phone, laptop]) {
      const event = await device.next(naming(noteId));
      assert.equal(event.event, 'notes');
      assert.deepEqual(idsOf(event), [noteId]);
      assert.ok(event.id, 'every event has an id');
    }
    for (const change of [
      () => owner.patch(`/api/notes/${noteId}`, { content: '- [x] milk' }),
      () => owner.patch(`/api/notes/${noteId}`, { color: 'mint' }),
      () => owner.patch(`/api/notes/${noteId}`, { trashed: true }),
      () => owner.delete(`/api/notes/${noteId}`),
    ]) {
      const from = phone.events.length;
      const answer = await change();
      assert.ok(answer === undefined || answer.status < 300, answer?.text);
      await phone.next(naming(noteId), 3_000, from);
    }
    phone.close();
    laptop.close();
  });

  it('never names a note to a stranger; a collaborator hears it from being added until being removed', async () => {
    const aliceStream = await open(alice.client);
    const strangerStream = await open(stranger.client);
    const noteId = await createNote(owner, 'shared list');
    await edit(owner, noteId, 'before sharing');
    await heardNothingOf(aliceStream, noteId);

    let from = aliceStream.events.length;
    const added = await owner.post(`/api/notes/${noteId}/collaborators`, { userId: alice.userId });
    assert.equal(added.status, 201, added.text);
    await aliceStream.next(naming(noteId), 3_000, from);

    from = aliceStream.events.length;
    await edit(owner, noteId, 'milk');
    await aliceStream.next(naming(noteId), 3_000, from);

    // Alice's own edit reaches the owner's devices.
    const ownerStream = await open(owner);
    from = aliceStream.events.length;
    await edit(alice.client, noteId, 'milk, eggs');
    await ownerStream.next(naming(noteId));
    await aliceStream.next(naming(noteId), 3_000, from);

    from = aliceStream.events.length;
    const removed = await owner.delete(`/api/notes/${noteId}/collaborators?userId=${alice.userId}`);
    assert.equal(removed.status, 200, removed.text);
    await aliceStream.next(naming(noteId), 3_000, from);
    const afterRemoval = aliceStream.text().length;
    await edit(owner, noteId, 'after removal');
    await owner.delete(`/api/notes/${noteId}`);
    await sleep(QUIET_MS);
    assert.ok(!aliceStream.text().slice(afterRemoval).includes(noteId), 'heard of the note after removal');

    await heardNothingOf(strangerStream, noteId);
    ownerStream.close();
  });

  it('tells a collaborator that the note was deleted', async () => {
    const noteId = await createNote(owner, 'to delete');
    await owner.post(`/api/notes/${noteId}/collaborators`, { userId: alice.userId });
    const aliceStream = await open(alice.client);
    await owner.delete(`/api/notes/${noteId}`);
    await aliceStream.next(naming(noteId));
    aliceStream.close();
  });

  it("tells a user's devices of a change to their own reminder, and nobody else", async () => {
    const noteId = await createNote(owner, 'plants');
    await owner.post(`/api/notes/${noteId}/collaborators`, { userId: alice.userId });
    const aliceStream = await open(alice.client);
    const ownerStream = await open(owner);
    await sleep(QUIET_MS);
    const ownerHeard = ownerStream.text().length;
    const set = await alice.client.patch(`/api/notes/${noteId}`, {
      reminder: { at: '2031-01-01T09:00:00Z', repeat: 'weekly', timeZone: 'Europe/Berlin' },
    });
    assert.equal(set.status, 200, set.text);
    await aliceStream.next(naming(noteId));
    await sleep(QUIET_MS);
    assert.ok(!ownerStream.text().slice(ownerHeard).includes(noteId), "the owner heard of Alice's reminder");
    aliceStream.close();
    ownerStream.close();
  });

  it("tells a note's other users who opened and closed it (presence), and nobody else", async () => {
    const noteId = await createNote(owner, 'who is here');
    await owner.post(`/api/notes/${noteId}/collaborators`, { userId: alice.userId });
    const aliceStream = await open(alice.client);
    const ownerStream = await open(owner);
    const strangerStream = await open(stranger.client);
    const me = (await owner.get('/api/users/me')).body;
    const presenceOf = (here: boolean) => (event: ReceivedEvent) =>
      event.event === 'presence' && JSON.parse(event.data).here === here;
    assert.equal((await owner.post(`/api/notes/${noteId}/presence`, { here: true })).status, 204);
    const arrived = await aliceStream.next(presenceOf(true));
    assert.ok(arrived.id, 'every event has an id');
    assert.deepEqual(JSON.parse(arrived.data), { noteId, userId: me.id, name: me.displayName, here: true });
    assert.equal((await owner.post(`/api/notes/${noteId}/presence`, { here: false })).status, 204);
    await aliceStream.next(presenceOf(false));
    // Not to the announcer's own streams, never to a stranger, and a stranger cannot announce.
    const refused = await stranger.client.post(`/api/notes/${noteId}/presence`, { here: true });
    assert.equal(refused.status, 404);
    assert.equal((await owner.post(`/api/notes/${noteId}/presence`, { here: 'yes' })).status, 400);
    const { key } = await createApiKey(owner, ['notes:read']);
    const readOnly = await owner.post(
      `/api/notes/${noteId}/presence`,
      { here: true },
      {
        headers: { authorization: `Bearer ${key}`, cookie: '' },
      },
    );
    assert.equal(readOnly.body.code, 'insufficient_scope', readOnly.text);
    await sleep(QUIET_MS);
    assert.ok(!ownerStream.events.some((event) => event.event === 'presence'), 'told the announcer');
    await heardNothingOf(strangerStream, noteId);
    assert.ok(!aliceStream.events.some((event) => event.data.includes(`"userId":${stranger.userId}`)));
    for (const stream of [aliceStream, ownerStream, strangerStream]) stream.close();
  });

  it('ends a stream within seconds of its key being revoked or its session ending', async () => {
    const { id, key } = await createApiKey(alice.client);
    const byKey = await open(server.url, { authorization: `Bearer ${key}` });
    assert.equal(byKey.status, 200);
    const session = await createUserClient(server, 'bob@example.com', 'bob secret 1', owner);
    const bySession = await open(session.client);
    assert.equal(bySession.status, 200);
    const started = Date.now();
    assert.equal((await alice.client.delete(`/api/settings/api-keys/${id}`)).status, 200);
    assert.equal((await session.client.post('/api/auth/logout')).status, 200);
    const timeout = sleep(5_000).then(() => assert.fail('a stream outlived its credential by 5 s'));
    await Promise.race([Promise.all([byKey.ended, bySession.ended]), timeout]);
    assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
  });

  it('resumes with Last-Event-ID, and asks for a resync when the id is unknown', async () => {
    const first = await open(owner);
    const noteA = await createNote(owner, 'A');
    const seen = await first.next(naming(noteA));
    first.close();
    await sleep(50);
    const noteB = await createNote(owner, 'B');
    const noteC = await createNote(owner, 'C');
    await sleep(100);

    const resumed = await open(owner, { 'last-event-id': seen.id! });
    const missed = await resumed.next(naming(noteC));
    await resumed.next(naming(noteB));
    assert.ok(!resumed.events.some(naming(noteA)), 'sent again what was seen');
    assert.ok(resumed.events.every((e) => e.event === 'notes'));

    // A later write reaches the resumed stream as usual.
    const noteD = await createNote(owner, 'D');
    const later = await resumed.next(naming(noteD));
    assert.notEqual(later.id, missed.id);
    resumed.close();

    const malformed = await open(owner, { 'last-event-id': 'garbage' });
    assert.equal(malformed.status, 400);
    for (const unknown of ['elsewhere.12', `${seen.id!.split('.')[0]}.999999999`]) {
      const stream = await open(owner, { 'last-event-id': unknown });
      const resync = await stream.next((e) => e.event === 'resync');
      assert.ok(resync.id);
      stream.close();
    }
  });

  it('refuses a stream past the per-user limit with 429, and accepts one again once another closes', async () => {
    const user = await createUserClient(server, 'limits@example.com', 'limits secret', owner);
    const held = await Promise.all([1, 2, 3, 4].map(() => open(user.client)));
    assert.deepEqual(
      held.map((s) => s.status),
      [200, 200, 200, 200],
    );
    const refused = await open(user.client);
    assert.equal(refused.status, 429);
    assert.ok(refused.headers['retry-after'] !== undefined || refused.text().includes('rate_limited'));
    assert.match(refused.text(), /rate_limited/);
    // Another user is not affected.
    const other = await open(alice.client);
    assert.equal(other.status, 200);
    other.close();
    held[0]!.close();
    await sleep(100);
    const again = await open(user.client);
    assert.equal(again.status, 200);
    for (const stream of [...held, again]) stream.close();
  });
});

describe('GET /api/events: the server-wide limit', () => {
  it('refuses past EVENTS_MAX_STREAMS with 429', async () => {
    const server = await startServer({ env: { EVENTS_MAX_STREAMS: '2' } });
    try {
      const owner = await setupOwner(server.url);
      const alice = await createUserClient(server, 'alice@example.com', undefined, owner);
      const a = await openEvents(owner);
      const b = await openEvents(alice.client);
      const c = await openEvents(alice.client);
      assert.deepEqual([a.status, b.status, c.status], [200, 200, 429]);
      a.close();
      b.close();
    } finally {
      await server.close();
    }
  });
});

describe('GET /api/events: reminders ringing', () => {
  it("tells the user's devices when their reminder rang and moved on to its next time", async () => {
    const clock = new ManualClock(Date.parse('2031-06-01T08:00:00Z'));
    const server = await startServer({ clock });
    try {
      const owner = await setupOwner(server.url);
      const created = await owner.post('/api/notes', {
        title: 'water the plants',
        reminder: { at: '2031-06-01T08:10:00Z', repeat: 'daily', timeZone: 'UTC' },
      });
      assert.equal(created.status, 201, created.text);
      const stream = await openEvents(owner);
      await sleep(QUIET_MS);
      const from = stream.events.length;
      clock.advance(10 * 60_000);
      await stream.next(naming(created.body.id), 5_000, from);
      const pulled = await owner.get<{ id: string; reminder: { nextAt: string } }[]>('/api/sync?since=0');
      const note = pulled.body.find((n) => n.id === created.body.id)!;
      assert.equal(note.reminder.nextAt, '2031-06-02T08:10:00.000Z');
      stream.close();
    } finally {
      await server.close();
    }
  });
});

/**
 * Two server processes on one PostgreSQL database: a write on one reaches the streams held by
 * the other, through LISTEN/NOTIFY, or through Redis pub/sub with REDIS_URL.
 */
for (const bus of ['PostgreSQL LISTEN/NOTIFY', 'Redis pub/sub'] as const) {
  const redis = bus === 'Redis pub/sub';
  describe(`GET /api/events across 2 processes (${bus})`, {
    skip: (!onPostgres && 'needs TEST_DATABASE_URL') || (redis && !testRedisUrl && 'needs TEST_REDIS_URL'),
  }, () => {
    it('a write on one process reaches the collaborator and the owner on the other, and no stranger', async () => {
      await withServerProcesses(
        2,
        async ([one, two]) => {
          const owner = await setupOwner(one!.url);
          const server = { url: one!.url, app: undefined as never };
          const alice = await createUserClient(server, 'alice@example.com', undefined, owner);
          const mallory = await createUserClient(server, 'mallory@example.com', undefined, owner);
          const onTwo = (client: TestClient) => {
            const moved = { ...client, baseUrl: two!.url } as TestClient;
            return openEvents(moved);
          };
          const ownerStream = await onTwo(owner);
          const aliceStream = await onTwo(alice.client);
          const malloryStream = await onTwo(mallory.client);
          try {
            const noteId = await createNote(owner, 'across processes');
            await ownerStream.next(naming(noteId));
            await owner.post(`/api/notes/${noteId}/collaborators`, { userId: alice.userId });
            await aliceStream.next(naming(noteId));
            const from = aliceStream.events.length;
            await edit(owner, noteId, 'tick');
            await aliceStream.next(naming(noteId), 3_000, from);
            // Presence announced on one process reaches the collaborator on the other.
            assert.equal((await owner.post(`/api/notes/${noteId}/presence`, { here: true })).status, 204);
            await aliceStream.next((event) => event.event === 'presence' && event.data.includes(noteId));
            if (redis) {
              // Another deployment on the same Redis (or anyone who can publish there) names the
              // note with Mallory's id: she holds no tombstone of it, so she hears nothing.
              const publisher = new Redis(testRedisUrl!);
              const forged = { changed: [noteId], ended: [[noteId, mallory.userId]] };
              await publisher.publish(CHANNEL, JSON.stringify(forged));
              await publisher.quit();
            }
            await heardNothingOf(malloryStream, noteId);
          } finally {
            for (const stream of [ownerStream, aliceStream, malloryStream]) stream.close();
          }
        },
        { envOf: (): Record<string, string> => (redis ? { REDIS_URL: testRedisUrl! } : {}) },
      );
    });
  });
}

describe('GET /api/events across 2 processes, their Redis away at start and restarted', {
  skip: (!onPostgres && 'needs TEST_DATABASE_URL') || privateRedisMissing,
}, () => {
  it('both start without it, hints flow once it is up, and streams resync after it restarts', async () => {
    const redis = await startPrivateRedis();
    await redis.stop();
    try {
      await withServerProcesses(
        2,
        async ([one, two]) => {
          await redis.start();
          // ioredis retries with a growing delay (up to 2 s): sign-ins need the rate limits' Redis.
          for (const server of [one!, two!]) {
            const health = new TestClient(server.url);
            await waitFor(server, 'Redis', async () => (await health.get('/api/health')).body.redis === 'ok');
          }
          const owner = await setupOwner(one!.url);
          const stream = await openEvents({ ...owner, baseUrl: two!.url } as TestClient);
          try {
            const noteId = await createNote(owner, 'once Redis is up');
            let heard = false;
            for (let attempt = 0; attempt < 20 && !heard; attempt++) {
              const from = stream.events.length;
              await edit(owner, noteId, `attempt ${attempt}`);
              heard = await stream.next(naming(noteId), 500, from).then(
                () => true,
                () => false,
              );
            }
            assert.ok(heard, 'no hint crossed between the processes once Redis was up');
            const from = stream.events.length;
            await redis.stop();
            await redis.start();
            // Messages published while it was away are lost: the stream is told to pull.
            await stream.next((e) => e.event === 'resync', 10_000, from);
          } finally {
            stream.close();
          }
        },
        { envOf: () => ({ REDIS_URL: redis.url }) },
      );
    } finally {
      await redis.stop();
    }
  });
});
