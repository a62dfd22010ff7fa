import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Actor, NewSession, ResolvedSession } from '../actor.js';
import { errors } from '../errors.js';

/**
 * How a route authenticates (set as `config.auth` on each route):
 * - public: nobody needs to be signed in;
 * - optional: a session is used when present (GET /api/auth/status);
 * - session: a session cookie only (account and key management, D-KEY-2);
 * - user: a session cookie or an API key (D-KEY-2). The default;
 * - key: an API key only (POST /api/mcp: docs/interface.md#authentication-rule-5).
 */
export type AuthMode = 'public' | 'optional' | 'session' | 'user' | 'key';

/** Turns a Bearer token into an actor; provided by the API keys feature. */
export type BearerAuthenticator = (token: string) => Promise<Actor | null>;

/** Turns a session cookie into an actor; provided by the auth feature. */
export type SessionResolver = (token: string) => Promise<ResolvedSession | null>;

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
  interface FastifyRequest {
    actor: Actor | null;
    /** Hash of the session behind this request, when it came with a session cookie. */
    sessionTokenHash: string | null;
  }
}

export const SESSION_COOKIE = 'session';
/** Methods that may change data: the ones the cross-site guard (D-AUTH-5) applies to. */
export const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The token of `Authorization: Bearer <token>`; '' for another Authorization, null for none. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : '';
}

/**
 * The session cookie's attributes (D-AUTH-4). `Secure` whenever PUBLIC_URL is https, whatever
 * the proxy sends or leaves out (a missing `X-Forwarded-Proto`, TRUST_PROXY unset): browsers
 * then never send the session over plain http. Without PUBLIC_URL, when the request came over
 * https.
 */
export function sessionCookieOptions(request: FastifyRequest) {
  const publicUrl = request.server.appConfig.publicUrl;
  const secure = publicUrl?.startsWith('https:') || request.protocol === 'https';
  return { httpOnly: true, sameSite: 'lax', path: '/', secure } as const;
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, session: NewSession): void {
  reply.setCookie(SESSION_COOKIE, session.token, {
    ...sessionCookieOptions(request),
    maxAge: session.maxAgeSeconds,
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(request));
}

/** The authenticated caller; routes with auth 'user' or 'session' always have one. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw errors.unauthenticated();
  return request.actor;
}

interface AuthPluginOptions {
  resolveSession: SessionResolver;
  publicUrl: string | null;
  bearer?: BearerAuthenticator;
}

/**
 * Resolves the caller before the body is read, so unauthenticated requests are refused cheaply,
 * and guards cookie-authenticated writes against cross-site requests (D-AUTH-5).
 */
export const authPlugin = fp<AuthPluginOptions>(async (app: FastifyInstance, options) => {
  app.decorateRequest('actor', null);
  app.decorateRequest('sessionTokenHash', null);

  app.addHook('onRequest', async (request, reply) => {
    if (request.is404) return;
    const bearer = bearerToken(request);
    const mode: AuthMode = request.routeOptions.config.auth ?? 'user';
    const byKey = mode === 'key' || (bearer !== null && mode === 'user');
    // D-AUTH-5: a browser write from another site is refused before anything else. Applied to
    // every write not authenticated by an API key, which also covers login and setup (no login
    // CSRF) and session-only routes that a stray Authorization header must not exempt.
    if (!byKey && UNSAFE_METHODS.has(request.method)) assertSameOrigin(request, options.publicUrl);
    if (mode === 'public') return;

    if (byKey) {
      const actor = bearer && options.bearer ? await options.bearer(bearer) : null;
      // D-MCP-2: the challenge tells clients which credential is expected.
      if (!actor) {
        throw errors.unauthenticated('The API key is missing, invalid or revoked', {
          'www-authenticate': 'Bearer',
        });
      }
      request.actor = actor;
      return;
    }

    // Cookies never cross origins: a page elsewhere, even one allowed by CORS_ORIGINS, cannot
    // act with the user's session, for reading either (only API keys work across origins).
    const token = isCrossOrigin(request, options.publicUrl) ? undefined : request.cookies[SESSION_COOKIE];
    if (token) {
      const session = await options.resolveSession(token);
      if (session) {
        request.actor = session.actor;
        request.sessionTokenHash = session.tokenHash;
        if (session.renewed) setSessionCookie(request, reply, session.renewed);
      }
    }
    if (!request.actor && mode !== 'optional') throw errors.unauthenticated();
  });
});

/** This server's origin as the request reached it (honouring X-Forwarded-* only under TRUST_PROXY). */
export function requestOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** The request names an Origin other than this server's or PUBLIC_URL (a page of another site). */
function isCrossOrigin(request: FastifyRequest, publicUrl: string | null): boolean {
  const origin = request.headers.origin;
  return origin !== undefined && origin !== requestOrigin(request) && origin !== publicUrl;
}

/** An unsafe request whose Origin is present must come from this server or PUBLIC_URL. */
function assertSameOrigin(request: FastifyRequest, publicUrl: string | null): void {
  if (isCrossOrigin(request, publicUrl)) throw errors.crossOrigin();
}
