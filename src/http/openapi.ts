import type { SwaggerTransform } from '@fastify/swagger';
import type { FastifySchema } from 'fastify';
import type { Scope } from '../shared/api/apiKeys.js';
import type { AuthMode } from './auth.js';
import { SESSION_COOKIE, UNSAFE_METHODS } from './auth.js';
import { ErrorRef } from './schemas.js';

/**
 * What the OpenAPI document (D-OPS-5) says about every route, derived here from facts the route
 * already states (its `config.auth` mode, its method, its input schemas, its rate limit) so that
 * no route repeats them and routes added later are described the same way. Per-route facts
 * (response headers such as ETag, feature errors such as 404 or 412) stay in the route schemas.
 */

export const securitySchemes = {
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: 'The session cookie set by POST /api/auth/login or /api/auth/setup',
  },
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'nsk_…',
    description:
      'An API key (POST /api/settings/api-keys) sent as `Authorization: Bearer nsk_…`. Each operation lists the scope it needs: `notes:read` (every key has it) or `notes:write`; a read-only key gets 403 `insufficient_scope` where `notes:write` is needed',
  },
} as const;

type SecurityRequirement = Record<string, string[]>;

/**
 * The API key scope (D-KEY-3) an operation needs: reading needs `notes:read`, which every key
 * has; anything that may change data needs `notes:write`. MCP takes any key; its write tools
 * need `notes:write` (docs/mcp.md).
 */
function keyScope(method: string, auth: AuthMode): Scope {
  return auth === 'key' || !UNSAFE_METHODS.has(method) ? 'notes:read' : 'notes:write';
}

/**
 * The credentials each auth mode of src/http/auth.ts needs, as OpenAPI security requirements:
 * `[]` when none is needed (public, and optional: GET /api/auth/status uses a session cookie
 * when one is sent, and answers without one too).
 */
function securityOf(method: string, auth: AuthMode): SecurityRequirement[] {
  switch (auth) {
    case 'public':
    case 'optional':
      return [];
    case 'session':
      return [{ session: [] }];
    case 'user':
      return [{ session: [] }, { apiKey: [keyScope(method, auth)] }];
    case 'key':
      return [{ apiKey: [keyScope(method, auth)] }];
  }
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: `details` names each field and why (validation_failed, invalid_json, …)',
  401: 'No valid session or API key (unauthenticated)',
  403: 'Refused: cross_origin, insufficient_scope (read-only API key), forbidden, …',
  404: 'Not found (for notes: also when you may not see it, so ids never leak)',
  405: 'Method not allowed',
  406: 'Not acceptable',
  409: 'Conflicts with the current state',
  410: 'Gone',
  412: 'If-Match names an older version (version_mismatch)',
  413: 'The body is too large (payload_too_large, file_too_large)',
  415: 'The body has an unsupported media type (unsupported_media_type)',
  429: 'Too many requests (rate_limited); wait Retry-After seconds',
  503: 'The service is unhealthy',
};

const headerSchema = (description: string, type: 'string' | 'integer' = 'string') => ({ type, description });

/** Headers every 429 carries (@fastify/rate-limit with the IETF draft headers, D-SHARE-2, D-AUTH-3). */
const RATE_LIMIT_HEADERS = {
  'retry-after': headerSchema('Seconds to wait before trying again', 'integer'),
  'ratelimit-limit': headerSchema('Requests allowed per window', 'integer'),
  'ratelimit-remaining': headerSchema('Requests left in this window', 'integer'),
  'ratelimit-reset': headerSchema('Seconds until the window resets', 'integer'),
};

/** A session past half its life is renewed on whatever request uses it (docs/api.md). */
const RENEWED_SESSION_COOKIE = {
  'set-cookie': headerSchema(
    `A renewed \`${SESSION_COOKIE}\` cookie, when the session was past half its life`,
  ),
};

type ResponseEntry = Record<string, unknown> & { headers?: Record<string, unknown> };

/** The 4xx answers a route can give because of what it is, whatever its feature does. */
function commonErrorStatuses(
  method: string,
  auth: AuthMode,
  schema: FastifySchema,
  rateLimited: boolean,
): number[] {
  const statuses: number[] = [];
  const hasInput = Boolean(schema.params || schema.querystring || schema.body || schema.headers);
  if (hasInput) statuses.push(400);
  if (auth === 'session' || auth === 'user' || auth === 'key') statuses.push(401);
  // D-AUTH-5 guards every write not authenticated by a key; D-KEY-3 refuses writes by read-only keys.
  if (UNSAFE_METHODS.has(method) && auth !== 'key') statuses.push(403);
  if (BODY_METHODS.has(method)) statuses.push(413, 415);
  if (rateLimited) statuses.push(429);
  return statuses;
}

/** `GET /api/notes/{id}/attachments` → `getNotesByIdAttachments`: unique because method + path is. */
function operationIdFor(method: string, url: string): string {
  const words = url
    .replace(/^\/api\//, '/')
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => {
      const param = /^[:{](\w+)}?$/.exec(segment);
      return param ? ['by', param[1]!] : segment.split(/[-_.]/);
    });
  return method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

function withResponseHeaders(entry: ResponseEntry, headers: Record<string, unknown>): ResponseEntry {
  return { ...entry, headers: { ...headers, ...entry.headers } };
}

/**
 * @fastify/swagger `transform`: adds security, operationId, the common error answers (with the
 * D-ERR-1 body), rate-limit and renewed-cookie headers. It returns a copy for the document only;
 * the route's own schema (used for validation and serialization) is left untouched.
 */
export const describeRoute: SwaggerTransform = ({ schema: routeSchema, url, route }) => {
  if ((routeSchema as { hide?: boolean } | undefined)?.hide) return { schema: routeSchema, url };
  const schema: FastifySchema = routeSchema ?? {};
  const method = String(route.method);
  const config = (route.config ?? {}) as { auth?: AuthMode; rateLimit?: unknown };
  const auth = config.auth ?? 'user';
  const ownResponses = (schema.response ?? {}) as Record<string, ResponseEntry>;
  const responses: Record<string, ResponseEntry> = {};
  for (const status of commonErrorStatuses(method, auth, schema, config.rateLimit !== undefined)) {
    responses[status] = ErrorRef as unknown as ResponseEntry;
  }
  Object.assign(responses, ownResponses);
  for (const [status, entry] of Object.entries(responses)) {
    const code = Number(status);
    let described = entry;
    if (code >= 400 && entry.description === undefined && ERROR_DESCRIPTIONS[code]) {
      described = { ...described, description: ERROR_DESCRIPTIONS[code] };
    }
    if (code === 429) described = withResponseHeaders(described, RATE_LIMIT_HEADERS);
    if (code >= 200 && code < 300 && auth !== 'public' && auth !== 'key') {
      described = withResponseHeaders(described, RENEWED_SESSION_COOKIE);
    }
    responses[status] = described;
  }
  const security = securityOf(method, auth);
  return {
    url,
    schema: {
      ...schema,
      operationId: (schema as { operationId?: string }).operationId ?? operationIdFor(method, url),
      security,
      response: responses,
    } as FastifySchema,
  };
};
