/**
 * What POST /api/mcp needs of the MCP SDK (and zod, which its tools use), in one module that
 * routes.ts loads on the first MCP request: ~25 MiB an idle server that no agent talks to
 * does not need (docs/decisions/0017-performance.md).
 */
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
export { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
export { buildMcpServer } from './tools.js';
