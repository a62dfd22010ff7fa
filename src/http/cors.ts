import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { bearerToken } from './auth.js';

/** What a browser client on another origin may send and read (docs/api.md, CORS). */
const CORS_OPTIONS = {
  methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
  allowedHeaders: [
    'authorization',
    'content-type',
    'if-match',
    'if-none-match',
    'mcp-session-id',
    'mcp-protocol-version',
  ],
  exposedHeaders: [
    'etag',
    'x-sync-time',
    'retry-after',
    'ratelimit-limit',
    'ratelimit-remaining',
    'ratelimit-reset',
    'www-authenticate',
    'content-disposition',
    'mcp-session-id',
  ],
  // Never Access-Control-Allow-Credentials: cookies do not cross origins, API keys do.
  credentials: false,
  maxAge: 600,
  // An OPTIONS without Access-Control-Request-Method is answered like a preflight rather than
  // with the plugin's plain-text 400.
  strictPreflight: false,
};

/**
 * CORS for browser clients on the origins in CORS_ORIGINS (extensions, other web apps), with
 * API keys only. Registered before the auth hook, so a 401 or 413 can be read by the page too.
 *
 * The plugin's options are static (normalised once) and it decides by `Origin` alone: a listed
 * origin gets the headers, and its preflights (never with credentials) are answered. The rest of
 * the rule is the hook after it: any other answer to a listed origin without an API key has them
 * taken back, so no page elsewhere reads what a cookie's session sees (and the auth hook ignores
 * cookies sent cross-origin anyway). A `delegator` could decide all of it in one place, but the
 * plugin then normalises the options it returns on every request, with an `Origin` or without
 * (5–10 µs a request: docs/benchmarks.md, "CORS without per-request normalisation").
 */
export async function registerCors(app: FastifyInstance, allowedOrigins: readonly string[]): Promise<void> {
  const allowed = new Set(allowedOrigins);
  // The plugin's catch-all OPTIONS route: preflights carry no credentials, so none is asked for
  // (an OPTIONS the plugin does not answer is a 404).
  app.addHook('onRoute', (route) => {
    if (route.method === 'OPTIONS') route.config = { ...route.config, auth: 'public' };
  });
  await app.register(cors, {
    ...CORS_OPTIONS,
    origin: (origin: string | undefined, callback: (error: null, origin: string | false) => void) => {
      callback(null, origin !== undefined && allowed.has(origin) ? origin : false);
    },
  });
  // Right after the plugin's own onRequest hook, which answered preflights itself.
  app.addHook('onRequest', (request, reply, done) => {
    if (
      reply.hasHeader('access-control-allow-origin') &&
      request.method !== 'OPTIONS' &&
      !bearerToken(request)
    ) {
      reply.removeHeader('access-control-allow-origin');
      reply.removeHeader('access-control-expose-headers');
    }
    done();
  });
}
