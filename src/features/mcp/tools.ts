import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { type Actor, canWrite } from '../../actor.js';
import { APP_VERSION } from '../../version.js';
import type { McpDeps } from './tools/common.js';
import * as readTools from './tools/read.js';
import * as subscriptions from './tools/subscriptions.js';
import * as writeTools from './tools/write.js';

const INSTRUCTIONS = `A personal notes service (like Google Keep). Notes have a title, Markdown content, a color, \
flags (pinned, archived, trashed) and tags, which come from #hashtags written in the title or content. \
Checklist notes keep their items as Markdown task lines ("- [ ] milk", "- [x] bread"). \
Use search_notes or list_notes to find a note's id, get_note to read it in full, and the other tools to change it. \
Deleting is two steps on purpose: trash_note first, and delete_note only for a note already in the trash.`;

/**
 * Makes every tool registered on `server` refuse unknown arguments (D-MCP-3): the input schema
 * clients are shown says `additionalProperties: false`, while the SDK's default parsing drops an
 * unknown argument silently, so a misspelt `expectedVersion` would turn a guarded update into an
 * unguarded one. The refusal is a tool error naming the argument, which a model can correct.
 */
function rejectUnknownArguments(server: McpServer): void {
  const register = server.registerTool.bind(server);
  server.registerTool = ((name: string, config: { inputSchema?: z.ZodRawShape }, callback: never) => {
    const inputSchema = config.inputSchema && z.object(config.inputSchema).strict();
    return register(name, { ...config, inputSchema }, callback);
  }) as typeof server.registerTool;
}

/**
 * One MCP server for one request, acting as `actor` (D-MCP-3): the read tools and the note
 * resources (tools/read.ts) with their subscriptions (tools/subscriptions.ts), and the write
 * tools (tools/write.ts) unless the actor is a read-only key (D-KEY-3).
 */
export function buildMcpServer(actor: Actor, deps: McpDeps): McpServer {
  const server = new McpServer({ name: 'notes', version: APP_VERSION }, { instructions: INSTRUCTIONS });
  rejectUnknownArguments(server);
  readTools.register(server, actor, deps);
  subscriptions.register(server, deps);
  if (canWrite(actor)) writeTools.register(server, actor, deps);
  return server;
}
