import assert from 'node:assert/strict';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { LOGIN_RATE_LIMIT } from '../src/features/auth/routes.js';
import { OWNER_PASSWORD, setupOwner, TestClient, type TestResponse } from './helpers/client.js';
import { sqliteOnly } from './helpers/postgres.js';
import { privatePostgresMissing, startPrivatePostgres } from './helpers/privatePostgres.js';
import { privateRedisMissing, startPrivateRedis } from './helpers/redis.js';
import {
  assertAlive,
  type ServerProcess,
  spawnServer,
  startServer,
  tempDataDir,
  waitFor,
} from './helpers/server.js';

/**
 * An outage of the database or of Redis ends no server process (issue 26): what a server needs
 * and cannot reach answers 503 `unavailable` with Retry-After, /api/health says so, and the
 * process recovers by itself. Each test stops and restarts a server of its own, never the shared
 * ones; the server under test is a child process, so that an unhandled error would end it.
 */

/** A refusal for an outage: 503 `unavailable` with a Retry-After in seconds. */
function assertUnavailable(response: TestResponse, what: string) {
  assert.equal(response.status, 503, `${what}: ${response.text}`);
  assert.equal(response.body.code, 'unavailable', what);
  assert.match(response.headers.get('retry-after') ?? '', /^[1-9]\d*$/, `${what}: Retry-After`);
}

/**
 * `writers` clients creating notes one after another until `stop`: the ids answered 201, the
 * outage refusals, and anything else (a 500, a broken connection), which must never happen.
 */
function writeLoad(server: ServerProcess, owner: TestClient, writers: number) {
  const acknowledged: string[] = [];
  const refused: number[] = [];
  const unexpected: string[] = [];
  let stopped = false;
  const writer = async (w: number) => {
    for (let n = 0; !stopped; n++) {
      try {
        const response = await owner.post('/api/notes', { title: `writer ${w} note ${n}` });
        if (response.status === 201) {
          acknowledged.push(response.body.id);
          continue;
        }
        assertUnavailable(response, 'a create while the database is away');
        refused.push(response.status);
      } catch (error) {
        unexpected.push(String(error));
      }
      // A refused writer waits a little, as Retry-After asks (shorter: the test is bounded).
      await sleep(100);
    }
  };
  const running = Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
  return {
    acknowledged,
    refused,
    unexpected,
    /** Resolves once `count` more creates have been acknowledged than when called. */
    progress(count: number) {
      const target = acknowledged.length + count;
      return waitFor(server, `${count} more acknowledged creates`, () => acknowledged.length >= target);
    },
    async stop() {
      stopped = true;
      await running;
    },
  };
}

async function stopServer(server: ServerProcess | undefined) {
  if (!server || server.child.exitCode !== null) return;
  const exited = once(server.child, 'exit');
  server.child.kill('SIGTERM');
  await exited;
}

describe('PostgreSQL restarted and stopped under write load', { skip: privatePostgresMissing }, () => {
  it('the server stays up, answers 503 unavailable while it is away, recovers, and keeps every acknowledged write', async (t) => {
    const cluster = await startPrivatePostgres();
    const dataDir = tempDataDir();
    let server: ServerProcess | undefined;
    try {
      server = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: cluster.url });
      const owner = await setupOwner(server.url);
      const load = writeLoad(server, owner, 4);
      try {
        await load.progress(20);
        await cluster.restart();
        await load.progress(20);

        await cluster.stop();
        const health = await new TestClient(server.url).get('/api/health');
        assert.equal(health.status, 503, health.text);
        assert.equal(health.body.code, 'unhealthy');
        assert.match(health.body.message, /database/);
        assert.match(health.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
        assertUnavailable(await owner.get('/api/notes'), 'a list');
        assertUnavailable(await owner.post('/api/notes', { title: 'while away' }), 'a create');
        assertUnavailable(await new TestClient(server.url).get('/api/auth/status'), 'the auth status');
        const refusedBefore = load.refused.length;
        await sleep(3000); // the writers keep writing into the outage
        assert.ok(load.refused.length > refusedBefore, 'the writers were refused meanwhile');
        await cluster.start();

        const { url } = server;
        await waitFor(server, '/api/health to answer 200', async () => {
          return (await fetch(`${url}/api/health`)).status === 200;
        });
        await load.progress(20);
      } finally {
        await load.stop();
      }
      t.diagnostic(`${load.acknowledged.length} creates acknowledged, ${load.refused.length} refused 503`);
      assertAlive(server);
      assert.deepEqual(load.unexpected, []);
      assert.ok(load.refused.length > 0);

      const client = new pg.Client({ connectionString: cluster.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ id: string }>('SELECT id FROM notes');
        const stored = new Set(rows.map((row) => row.id));
        const lost = load.acknowledged.filter((id) => !stored.has(id));
        assert.deepEqual(lost, [], `${lost.length} of ${load.acknowledged.length} acknowledged creates lost`);
      } finally {
        await client.end();
      }
    } finally {
      await stopServer(server);
      await cluster.destroy();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('Redis (the rate limits) stopped and started again', { skip: privateRedisMissing }, () => {
  it('sign-ins and share links answer 503 unavailable while it is away, /api/health reports it, and both recover', async () => {
    const redis = await startPrivateRedis();
    const dataDir = tempDataDir();
    let server: ServerProcess | undefined;
    try {
      server = await spawnServer({ DATA_DIR: dataDir, REDIS_URL: redis.url });
      const owner = await setupOwner(server.url);
      const note = (await owner.post('/api/notes', { title: 'public' })).body;
      const { token } = (await owner.post(`/api/notes/${note.id}/share`)).body;
      const visitor = new TestClient(server.url);
      const signIn = () => new TestClient(server!.url).post('/api/auth/login', { password: OWNER_PASSWORD });
      assert.equal((await signIn()).status, 200);
      assert.equal((await visitor.get(`/api/shared/${token}`)).status, 200);
      assert.deepEqual((await visitor.get('/api/health')).body.redis, 'ok');

      await redis.stop();
      // More attempts than the limit allows: none is let through unlimited, none is a 500.
      for (let n = 0; n <= LOGIN_RATE_LIMIT; n++) assertUnavailable(await signIn(), `sign-in ${n + 1}`);
      assertUnavailable(await visitor.get(`/api/shared/${token}`), 'the shared note');
      const page = await visitor.get(`/s/${token}`);
      assert.equal(page.status, 503);
      assert.match(page.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.match(page.text, /Please try again later/);
      // What needs no rate limit goes on; health reports Redis without taking the process out.
      assert.equal((await owner.post('/api/notes', { title: 'meanwhile' })).status, 201);
      const health = await visitor.get('/api/health');
      assert.equal(health.status, 200, health.text);
      assert.equal(health.body.redis, 'unreachable');

      await redis.start();
      await waitFor(server, 'Redis to be reported again', async () => {
        return (await visitor.get('/api/health')).body.redis === 'ok';
      });
      assert.equal((await signIn()).status, 200);
      assert.equal((await visitor.get(`/api/shared/${token}`)).status, 200);
      assertAlive(server);
    } finally {
      await stopServer(server);
      await redis.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('SQLite written by another process for longer than busy_timeout', () => {
  it(
    'answers the write 503 unavailable, and takes it once the other process is done',
    sqliteOnly,
    async () => {
      const server = await startServer();
      const other = new SQLite(path.join(server.dataDir, 'notes.db'));
      try {
        const owner = await setupOwner(server);
        other.exec('BEGIN IMMEDIATE'); // the write lock, as a long backup or the sqlite3 shell would hold it
        assertUnavailable(await owner.post('/api/notes', { title: 'blocked' }), 'a create');
        other.exec('ROLLBACK');
        assert.equal((await owner.post('/api/notes', { title: 'after' })).status, 201);
      } finally {
        other.close();
        await server.close();
      }
    },
  );
});
