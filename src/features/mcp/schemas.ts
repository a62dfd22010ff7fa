import { Type } from 'typebox';
import { ErrorRef } from '../../http/schemas.js';

/** The HTTP side of POST/GET/DELETE /api/mcp (D-MCP-2); the tools' own shapes are in presenters.ts. */
const JsonRpcMessage = Type.Object(
  { jsonrpc: Type.Literal('2.0') },
  { additionalProperties: true, description: 'A JSON-RPC 2.0 request, notification or response' },
);
export const JsonRpcError = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    error: Type.Object({ code: Type.Integer(), message: Type.String() }),
    id: Type.Null(),
  },
  { title: 'JsonRpcError' },
);
/** One JSON-RPC message or a batch of them. */
export const JsonRpcBody = Type.Union([
  JsonRpcMessage,
  Type.Array(JsonRpcMessage, { minItems: 1, maxItems: 100 }),
]);

/** A 400 is a JSON-RPC error from the transport, or the D-ERR-1 body of a bad request. */
export const McpBadRequest = Type.Union([JsonRpcError, ErrorRef]);

export const SessionHeaders = Type.Object({
  'mcp-session-id': Type.Optional(Type.String({ maxLength: 200, description: 'From the initialize answer' })),
});

/** The one message GET /api/mcp sends (decision 0045). */
export const ResourceUpdatedMessage = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    method: Type.Literal('notifications/resources/updated'),
    params: Type.Object({ uri: Type.String({ description: 'note://{id}' }) }),
  },
  { title: 'ResourceUpdatedNotification' },
);
