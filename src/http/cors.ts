import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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
 * The origin that gets CORS headers on this request, or false for none: a listed origin, on a
 * preflight (which never carries credentials) or on a request that brings an API key. A
 * cookie-authenticated request never gets them, so no page elsewhere reads what the user's
 * session sees (and the auth hook ignores cookies sent cross-origin anyway).
 */
function corsOrigin(request: FastifyRequest, allowed: ReadonlySet<string>): string | false {
  const origin = request.headers.origin;
  if (origin === undefined || !allowed.has(origin)) return false;
  return request.method === 'OPTIONS' || bearerToken(request) ? origin : false;
}

/**
 * CORS for browser clients on the origins in CORS_ORIGINS (extensions, other web apps), with
 * API keys only. Registered before the auth hook, so a 401 or 413 can be read by the page too.
 */
export async function registerCors(app: FastifyInstance, allowedOrigins: readonly string[]): Promise<void> {
  const allowed = new Set(allowedOrigins);
  // The plugin's catch-all OPTIONS route: preflights carry no credentials, so none is asked for
  // (an OPTIONS the plugin does not answer is a 404).
  app.addHook('onRoute', (route) => {
    if (route.method === 'OPTIONS') route.config = { ...route.config, auth: 'public' };
  });
  await app.register(cors, {
    delegator: (request, callback) =>
      callback(null, { ...CORS_OPTIONS, origin: corsOrigin(request, allowed) }),
  });
}
