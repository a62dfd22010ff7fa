import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { asAppError } from '../../../db/outage.js';
import { NOTE_COLORS } from '../../../shared/colors.js';
import type { NotesService } from '../../notes/service.js';
import type { RemindersService } from '../../reminders/service.js';
import type { RevisionsService } from '../../revisions/service.js';
import type { SearchService } from '../../search/service.js';
import type { TagsService } from '../../tags/service.js';

/**
 * What the MCP tools call (D-MCP-3). Each tool calls the same service function as the REST API,
 * as the key's user, so an agent can never do more than that user could.
 */
export interface McpDeps {
  notes: NotesService;
  revisions: RevisionsService;
  search: SearchService;
  tags: TagsService;
  reminders: RemindersService;
  /** The session's subscriptions to note resources (resources/subscribe), by note id. */
  subscriptions: {
    subscribe(noteId: string): Promise<unknown>;
    unsubscribe(noteId: string): Promise<void>;
  };
  /** Errors that are not AppErrors are logged here and reported to the model without details. */
  logError: (err: unknown) => void;
}

export const noteId = z
  .string()
  .uuid()
  .describe('The id (a UUID) of the note, as returned by search_notes, list_notes or create_note');

export const color = z.enum(NOTE_COLORS).describe('Background color of the note');

/**
 * Runs a tool body: its result becomes structuredContent (and JSON text for older clients);
 * service errors (AppError) become tool results with isError, so the model can read them and try
 * again.
 */
export function toolRunner(deps: Pick<McpDeps, 'logError'>) {
  return async function run(body: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
    try {
      const structured = await body();
      return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
    } catch (err) {
      const known = asAppError(err);
      if (known) {
        return { isError: true, content: [{ type: 'text', text: `${known.message} (${known.code})` }] };
      }
      deps.logError(err);
      return { isError: true, content: [{ type: 'text', text: 'Something went wrong on the server' }] };
    }
  };
}

const RESOURCE_NOT_FOUND = -32002; // MCP specification, resources/read

export function resourceNotFound(why: string): McpError {
  return new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${why}`);
}

/**
 * Runs the body of a resource request (read, subscribe): a note the user cannot see is the
 * specification's "resource not found", other refusals invalid params, an outage an internal
 * error with our message; the rest is the SDK's.
 */
export async function asResourceError<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    const known = asAppError(err);
    if (known?.statusCode === 404) throw resourceNotFound(known.message);
    if (known) {
      const code = known.statusCode < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError;
      throw new McpError(code, known.message);
    }
    throw err;
  }
}
