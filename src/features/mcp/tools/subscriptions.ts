import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { noteIdOfUri } from '../resources.js';
import { asResourceError, type McpDeps, resourceNotFound } from './common.js';

function noteIdOf(uri: string): string {
  const noteId = noteIdOfUri(uri);
  if (noteId === null) throw resourceNotFound(`${uri} is not a note://{id} resource`);
  return noteId;
}

/**
 * resources/subscribe and resources/unsubscribe for `note://{id}` (decision 0045): the session
 * then hears `notifications/resources/updated` on its GET stream when the note changes for the
 * key's user. A note the user cannot see is not found, as resources/read says.
 */
export function register(server: McpServer, { subscriptions }: Pick<McpDeps, 'subscriptions'>): void {
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async ({ params }) => {
    await asResourceError(() => subscriptions.subscribe(noteIdOf(params.uri)));
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async ({ params }) => {
    await asResourceError(() => subscriptions.unsubscribe(noteIdOf(params.uri)));
    return {};
  });
}
