import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.js';
import { eventStream } from '../../http/eventStream.js';
import { errorResponses, Success, withHeaders } from '../../http/schemas.js';
import { oauthDiscoveryRoutes } from './oauthDiscovery.js';
import { resourceUpdated } from './resources.js';
import {
  JsonRpcBody,
  JsonRpcError,
  McpBadRequest,
  ResourceUpdatedMessage,
  SessionHeaders,
} from './schemas.js';
import type { SessionCheck } from './service.js';

/** The only request headers the SDK transport needs; the API key stays out of it. */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'];

/** Sent pre-serialized: the route's error schemas also describe D-ERR-1 bodies (bad JSON, 401). */
function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string) {
  const body = { jsonrpc: '2.0', error: { code, message }, id: null };
  return reply.code(status).type('application/json').send(JSON.stringify(body));
}

/** D-MCP-2: no or malformed session id → 400; unknown, expired or another key's → 404. */
function sessionProblem(reply: FastifyReply, check: Exclude<SessionCheck, 'valid'>) {
  if (check === 'missing')
    return jsonRpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
  if (check === 'malformed') return jsonRpcError(reply, 400, -32000, 'Bad Request: malformed Mcp-Session-Id');
  return jsonRpcError(reply, 404, -32001, 'Session not found');
}

function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of FORWARDED_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request(`${request.protocol}://${request.host}${request.url}`, {
    method: request.method,
    headers,
  });
}

async function sendWebResponse(reply: FastifyReply, response: Response) {
  reply.code(response.status);
  for (const [name, value] of response.headers) reply.header(name, value);
  const body = await response.text();
  return reply.send(body === '' ? undefined : body);
}

/**
 * /api/mcp: Streamable HTTP (D-MCP-1). POST answers JSON: sessions are checked against the
 * database here; the SDK transport then runs statelessly for this one request, except for
 * `initialize`, where it generates the session id that we store bound to the key (D-MCP-2).
 * GET is the session's stream of resource updates, framed here (decision 0045).
 */
export const mcpRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { mcpSessions, notes, revisions, search, tags, reminders } = app.services;
  const config = { auth: 'key' as const };
  const docTags = ['mcp'];
  await app.register(oauthDiscoveryRoutes);

  app.post(
    '/api/mcp',
    {
      config,
      schema: {
        tags: docTags,
        summary: 'Model Context Protocol endpoint for AI agents (Bearer API key); see docs/mcp.md',
        headers: SessionHeaders,
        body: JsonRpcBody,
        response: {
          200: withHeaders(Type.Unknown({ description: 'The JSON-RPC response(s)' }), {
            'mcp-session-id': {
              type: 'string',
              description:
                'On the answer to initialize: the new session id, to send with every later request',
            },
          }),
          202: Type.Null({ description: 'Accepted notifications or responses; no body' }),
          // The transport's own refusals are JSON-RPC errors; HTTP-level ones (broken JSON, too
          // large, wrong media type, no key) use the D-ERR-1 body like every other route.
          400: McpBadRequest,
          404: JsonRpcError,
          406: JsonRpcError,
          ...errorResponses(401, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request);
      const { WebStandardStreamableHTTPServerTransport, isInitializeRequest, buildMcpServer } = await import(
        './sdk.js'
      );
      const messages = Array.isArray(request.body) ? request.body : [request.body];
      const initializing = messages.some((m) => isInitializeRequest(m));
      if (!initializing) {
        const check = await mcpSessions.check(actor, request.headers['mcp-session-id']);
        if (check !== 'valid') return sessionProblem(reply, check);
      }
      const transport = new WebStandardStreamableHTTPServerTransport({
        enableJsonResponse: true,
        sessionIdGenerator: initializing ? randomUUID : undefined,
        onsessioninitialized: (sessionId) => mcpSessions.open(actor, sessionId),
      });
      // The session this request belongs to: the one it names, or the one initialize opens.
      const sessionId = () => request.headers['mcp-session-id'] ?? transport.sessionId!;
      const server = buildMcpServer(actor, {
        subscriptions: {
          subscribe: (noteId) => mcpSessions.subscribe(actor, sessionId(), noteId),
          unsubscribe: (noteId) => mcpSessions.unsubscribe(sessionId(), noteId),
        },
        notes,
        revisions,
        search,
        tags,
        reminders,
        logError: (err) => request.log.error({ err }, 'MCP tool failed'),
      });
      await server.connect(transport);
      try {
        return await sendWebResponse(
          reply,
          await transport.handleRequest(webRequest(request), { parsedBody: request.body }),
        );
      } finally {
        await server.close();
      }
    },
  );

  app.delete(
    '/api/mcp',
    {
      config,
      schema: {
        tags: docTags,
        summary: 'End an MCP session',
        headers: SessionHeaders,
        response: {
          200: Success,
          400: McpBadRequest,
          404: JsonRpcError,
          ...errorResponses(401),
        },
      },
    },
    async (request, reply) => {
      const sessionId = request.headers['mcp-session-id'];
      const check = await mcpSessions.check(actorOf(request), sessionId);
      if (check !== 'valid') return sessionProblem(reply, check);
      await mcpSessions.end(sessionId!);
      return { success: true };
    },
  );

  // Decision 0045: the session's stream of notifications/resources/updated.
  app.get(
    '/api/mcp',
    {
      config,
      schema: {
        tags: docTags,
        summary: "A session's stream of server messages: notifications/resources/updated",
        description:
          'Server-Sent Events, each `event: message` with one JSON-RPC notification ' +
          '`notifications/resources/updated` {"uri": "note://{id}"} for a note the session subscribed ' +
          'to (resources/subscribe) that changed, was deleted or is no longer shared with you; a ' +
          'comment at least every 25 s. One stream per session (a new one replaces it); it counts ' +
          'towards the per-user limit of GET /api/events (429). See docs/mcp.md.',
        headers: SessionHeaders,
        response: {
          200: {
            description: 'An endless text/event-stream',
            content: { 'text/event-stream': { schema: ResourceUpdatedMessage } },
          },
          400: McpBadRequest,
          404: JsonRpcError,
          405: withHeaders(JsonRpcError, { allow: { type: 'string', description: 'POST, DELETE' } }),
          ...errorResponses(401, 429),
        },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request);
      const sessionId = request.headers['mcp-session-id'];
      // D-MCP-1 (GET answers 405) holds for every GET but a session's request for its stream.
      if (sessionId === undefined || !request.headers.accept?.includes('text/event-stream'))
        return jsonRpcError(
          reply.header('allow', 'POST, DELETE'),
          405,
          -32000,
          "Method not allowed: GET is only a session's event stream (Mcp-Session-Id, Accept: text/event-stream).",
        );
      const check = await mcpSessions.check(actor, sessionId);
      if (check !== 'valid') return sessionProblem(reply, check);
      const stream = eventStream(reply);
      const close = mcpSessions.listen(actor, sessionId!, {
        updated: (noteId) => stream.write(`event: message\ndata: ${resourceUpdated(noteId)}\n\n`),
        keepAlive: () => stream.keepAlive(),
        end: () => stream.end(),
      });
      return stream.send(close);
    },
  );
};
