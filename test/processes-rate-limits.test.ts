import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { REDIS_KEY_PREFIX } from '../src/db/rateLimitStore.js';
import { OUTAGE_RETRY_AFTER_SECONDS } from '../src/errors.js';
import { LOGIN_RATE_LIMIT } from '../src/features/auth/routes.js';
import { SHARED_ATTACHMENT_RATE_LIMIT, SHARED_NOTE_RATE_LIMIT } from '../src/features/sharing/routes.js';
import { setupOwner, TestClient } from './helpers/client.js';
import { onPostgres } from './helpers/postgres.js';
import { assertLimitsHold } from './helpers/rateLimits.js';
import { testRedisUrl } from './helpers/redis.js';
import { startServer, withServerProcesses } from './helpers/server.js';

/**
 * The rate limits count the requests of every process (src/db/rateLimitStore.ts): in PostgreSQL,
 * or in Redis with REDIS_URL. test/helpers/rateLimits.ts says what must hold.
 */
describe('rate limits across 3 processes', { skip: !onPostgres && 'needs TEST_DATABASE_URL' }, () => {
  it('count in PostgreSQL by default', async () => {
    await withServerProcesses(3, async (servers) =>
      assertLimitsHold(servers, await setupOwner(servers[0]!.url)),
    );
  });

  it('count in Redis with REDIS_URL', { skip: !testRedisUrl && 'needs TEST_REDIS_URL' }, async () => {
    const redis = new Redis(testRedisUrl!);
    try {
      const stale = await redis.keys(`${REDIS_KEY_PREFIX}*`);
      if (stale.length > 0) await redis.del(...stale);
      await withServerProcesses(
        3,
        async (servers) => assertLimitsHold(servers, await setupOwner(servers[0]!.url)),
        { envOf: () => ({ REDIS_URL: testRedisUrl! }) },
      );
      // The counts were kept in Redis, not in PostgreSQL: a key per limiter and client.
      const keys = (await redis.keys(`${REDIS_KEY_PREFIX}*`)).map((key) =>
        key.slice(REDIS_KEY_PREFIX.length),
      );
      assert.deepEqual(keys.sort(), [
        `  ${SHARED_ATTACHMENT_RATE_LIMIT}/60000 127.0.0.1`,
        `  ${SHARED_NOTE_RATE_LIMIT}/60000 127.0.0.1`,
        `POST /api/auth/login ${LOGIN_RATE_LIMIT}/60000 127.0.0.1`,
        'POST /api/auth/setup 10/60000 127.0.0.1',
      ]);
    } finally {
      redis.disconnect();
    }
  });
});

describe('rate limits in a Redis that cannot be reached', () => {
  it('refuse sign-ins as unavailable rather than let them through unlimited', async () => {
    // Port 1: nothing listens there.
    const server = await startServer({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    try {
      const attacker = new TestClient(server.url);
      for (let n = 0; n <= LOGIN_RATE_LIMIT; n++) {
        const answer = await attacker.post('/api/auth/login', { password: 'guess' });
        assert.equal(answer.status, 503, `attempt ${n + 1}`);
        assert.equal(answer.body.code, 'unavailable');
        assert.equal(answer.headers.get('retry-after'), String(OUTAGE_RETRY_AFTER_SECONDS));
      }
    } finally {
      await server.close();
    }
  });
});
