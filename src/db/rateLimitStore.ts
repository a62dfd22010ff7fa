import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { sql } from 'kysely';
import type { Db } from './connection.js';

/**
 * A @fastify/rate-limit store in PostgreSQL, so that the login throttle (D-AUTH-3) and the
 * public share limits (D-SHARE-2) count every process's requests (issue 15): one row per
 * limiter and client, a fixed window like the plugin's own in-memory store. One statement per
 * request, atomic on its row. Expired rows are deleted by the hourly maintenance
 * (deleteExpiredRateLimits).
 */
export function postgresRateLimitStore(db: Db): FastifyRateLimitStoreCtor {
  class PostgresRateLimitStore implements FastifyRateLimitStore {
    /** Which limiter: a route's method and URL, or for a limiter made by app.rateLimit() its limits. */
    constructor(private readonly limiter = '') {}

    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ) {
      const now = Date.now();
      sql<{ count: number; window_ends: number }>`
        INSERT INTO rate_limits (key, count, window_ends) VALUES (${`${this.limiter} ${key}`}, 1, ${now + timeWindow})
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN rate_limits.window_ends <= ${now} THEN 1 ELSE rate_limits.count + 1 END,
          window_ends = CASE WHEN rate_limits.window_ends <= ${now} THEN ${now + timeWindow} ELSE rate_limits.window_ends END
        RETURNING count, window_ends`
        .execute(db)
        .then(
          ({ rows }) => callback(null, { current: rows[0]!.count, ttl: rows[0]!.window_ends - now }),
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
      return new PostgresRateLimitStore(
        `${method} ${url} ${String(options.max)}/${String(options.timeWindow)}`,
      );
    }
  }
  return PostgresRateLimitStore as unknown as FastifyRateLimitStoreCtor;
}

export async function deleteExpiredRateLimits(db: Db, now: number): Promise<void> {
  await sql`DELETE FROM rate_limits WHERE window_ends <= ${now}`.execute(db);
}
