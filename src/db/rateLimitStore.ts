import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Db } from './types.js';

/** One request counted in a fixed window: the count so far and the window's milliseconds left. */
type Count = (key: string, windowMs: number) => Promise<{ current: number; ttl: number }>;

/**
 * A @fastify/rate-limit store over a shared counter, so that the login throttle (D-AUTH-3) and
 * the public share limits (D-SHARE-2) count every process's requests (issue 15). Each limiter
 * gets its own keys: a route's method and URL, or for a limiter made by app.rateLimit(), whose
 * route is unknown, its limits (the two share limiters differ in `max`). The plugin's own Redis
 * store names such limiters alike, so the two share limits would count together there.
 */
function sharedCounterStore(count: Count): FastifyRateLimitStoreCtor {
  class SharedCounterStore implements FastifyRateLimitStore {
    constructor(private readonly limiter = '') {}

    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ) {
      count(`${this.limiter} ${key}`, timeWindow).then(
        (result) => callback(null, result),
        (error: Error) => callback(error),
      );
    }

    child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]) {
      // The plugin passes the limiter's merged options; routeInfo is empty for app.rateLimit().
      const options = routeOptions as unknown as {
        max?: unknown;
        timeWindow?: unknown;
        routeInfo?: { method?: string; url?: string };
      };
      const { method = '', url = '' } = options.routeInfo ?? {};
      return new SharedCounterStore(`${method} ${url} ${String(options.max)}/${String(options.timeWindow)}`);
    }
  }
  return SharedCounterStore as unknown as FastifyRateLimitStoreCtor;
}

/**
 * The database's time in milliseconds, the same for every process: a window a process whose
 * clock is behind opened must not look expired to one whose clock is ahead.
 */
const databaseNowMs = sql<number>`(extract(epoch FROM statement_timestamp()) * 1000)::bigint`;

/**
 * Counters in PostgreSQL: one row per limiter and client, a fixed window like the plugin's own
 * in-memory store, one statement per request, atomic on its row. Expired rows are deleted by
 * the hourly maintenance (deleteExpiredRateLimits).
 */
export function postgresRateLimitStore(db: Db): FastifyRateLimitStoreCtor {
  return sharedCounterStore(async (key, windowMs) => {
    const { rows } = await sql<{ count: number; ttl: number }>`
      INSERT INTO rate_limits (key, count, window_ends) VALUES (${key}, 1, ${databaseNowMs} + ${windowMs})
      ON CONFLICT (key) DO UPDATE SET
        count = CASE WHEN rate_limits.window_ends <= ${databaseNowMs} THEN 1 ELSE rate_limits.count + 1 END,
        window_ends = CASE WHEN rate_limits.window_ends <= ${databaseNowMs}
          THEN ${databaseNowMs} + ${windowMs} ELSE rate_limits.window_ends END
      RETURNING count, window_ends - ${databaseNowMs} AS ttl`.execute(db);
    return { current: rows[0]!.count, ttl: rows[0]!.ttl };
  });
}

export async function deleteExpiredRateLimits(db: Db): Promise<void> {
  await sql`DELETE FROM rate_limits WHERE window_ends <= ${databaseNowMs}`.execute(db);
}

/** Every key this server writes in Redis starts with it (a Redis shared with other programs). */
export const REDIS_KEY_PREFIX = 'keepsake-notes:rate-limit:';

/** The first request of a window starts its expiry; one script, so atomic in Redis. */
const COUNT_SCRIPT = `
  local current = redis.call('INCR', KEYS[1])
  if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
  return {current, redis.call('PTTL', KEYS[1])}`;

/**
 * Counters in Redis (REDIS_URL): a key per limiter and client that expires with its window, so
 * nothing needs deleting.
 */
export function redisRateLimitStore(redis: Redis): FastifyRateLimitStoreCtor {
  return sharedCounterStore(async (key, windowMs) => {
    const [current, ttl] = (await redis.eval(COUNT_SCRIPT, 1, `${REDIS_KEY_PREFIX}${key}`, windowMs)) as [
      number,
      number,
    ];
    return { current, ttl };
  });
}
