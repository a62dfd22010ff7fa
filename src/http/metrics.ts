import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { requireInstanceOwner } from '../actor.js';
import { sha256Hex } from '../crypto.js';
import { errors } from '../errors.js';
import { actorOf } from './auth.js';

/** What `METRICS=true` measures; `observeQuery` is fed by the database's query log. */
export interface Metrics {
  registry: Registry;
  observeQuery(durationMs: number): void;
}

/** @public app.ts loads this module with import() only when metrics are on (knip does not follow it). */
export function createMetrics(): Metrics {
  // One registry per app: tests and commands build several apps in one process.
  const registry = new Registry();
  collectDefaultMetrics({ register: registry }); // process, heap, GC, event loop lag
  const queries = new Histogram({
    name: 'notes_db_query_seconds',
    help: 'Database statement durations',
    buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1],
    registers: [registry],
  });
  return { registry, observeQuery: (ms) => queries.observe(ms / 1000) };
}

/**
 * Request rates and latencies by route, sync push sizes, and `GET /metrics` in Prometheus's
 * text format. Never public: with `token` only `Authorization: Bearer <token>` may read it,
 * without one only the instance owner (session or API key).
 * @public loaded with import() by app.ts, as createMetrics.
 */
export async function registerMetrics(app: FastifyInstance, metrics: Metrics, token: string | null) {
  const requests = new Histogram({
    name: 'notes_http_request_seconds',
    help: 'HTTP requests by method, route and status class',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [metrics.registry],
  });
  const pushes = new Histogram({
    name: 'notes_sync_push_changes',
    help: 'Changes per sync push',
    buckets: [1, 5, 10, 50, 100, 500, 1000],
    registers: [metrics.registry],
  });

  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the URL: ids and tokens must not become labels.
    const route = request.routeOptions.url ?? 'unmatched';
    const status = `${Math.floor(reply.statusCode / 100)}xx`;
    requests.observe({ method: request.method, route, status }, reply.elapsedTime / 1000);
    const changes = (request.body as { changes?: unknown[] } | undefined)?.changes;
    if (route === '/api/sync' && request.method === 'POST' && Array.isArray(changes)) {
      pushes.observe(changes.length);
    }
  });

  const tokenHash = token === null ? null : sha256Hex(token);
  app.get(
    '/metrics',
    { config: { auth: tokenHash ? 'public' : 'user' }, schema: { hide: true } },
    async (request, reply) => {
      if (tokenHash) {
        const given = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
        // Compared as hashes, so the time taken says nothing about the token.
        if (given === undefined || sha256Hex(given) !== tokenHash) {
          throw errors.unauthenticated('Send the metrics token as a Bearer token', {
            'www-authenticate': 'Bearer',
          });
        }
      } else {
        requireInstanceOwner(actorOf(request));
      }
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    },
  );
}
