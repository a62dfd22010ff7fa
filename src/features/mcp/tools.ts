import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type CallToolResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type Actor, canWrite } from '../../actor.js';
import { asAppError } from '../../db/outage.js';
import { AppError, errors } from '../../errors.js';
import { MAX_CONTENT_LENGTH, MAX_TITLE_LENGTH } from '../../shared/api/limits.js';
import { NOTE_FILTERS } from '../../shared/api/notes.js';
import { NOTE_COLORS } from '../../shared/colors.js';
import { APP_VERSION } from '../../version.js';
import type { NotesService } from '../notes/service.js';
import type { RemindersService } from '../reminders/service.js';
import type { RevisionsService } from '../revisions/service.js';
import { MAX_SEARCH_QUERY_LENGTH } from '../search/schemas.js';
import type { SearchService } from '../search/service.js';
import type { TagsService } from '../tags/service.js';
import {
  ChecklistItemOut,
  markdown,
  NoteOut,
  NoteSummary,
  RevisionOut,
  summary,
  TagOut,
} from './presenters.js';
import { registerReminderTools } from './reminderTools.js';

/**
 * The MCP tools (D-MCP-3). Each one calls the same service function as the REST API, as the key's
 * user, so an agent can never do more than that user could; service errors (AppError) become tool
 * results with isError, so the model can read them and try again.
 */
export interface McpDeps {
  notes: NotesService;
  revisions: RevisionsService;
  search: SearchService;
  tags: TagsService;
  reminders: RemindersService;
  /** Errors that are not AppErrors are logged here and reported to the model without details. */
  logError: (err: unknown) => void;
}

const RESOURCE_NOT_FOUND = -32002; // MCP specification, resources/read

const INSTRUCTIONS = `A personal notes service (like Google Keep). Notes have a title, Markdown content, a color, \
flags (pinned, archived, trashed) and tags, which come from #hashtags written in the title or content. \
Checklist notes keep their items as Markdown task lines ("- [ ] milk", "- [x] bread"). \
Use search_notes or list_notes to find a note's id, get_note to read it in full, and the other tools to change it. \
Deleting is two steps on purpose: trash_note first, and delete_note only for a note already in the trash.`;

const noteId = z
  .string()
  .uuid()
  .describe('The id (a UUID) of the note, as returned by search_notes, list_notes or create_note');
const color = z.enum(NOTE_COLORS).describe('Background color of the note');
const title = z.string().max(MAX_TITLE_LENGTH).describe('Plain-text title; may be empty');
const content = z
  .string()
  .max(MAX_CONTENT_LENGTH)
  .describe('Markdown body. Write #hashtags to tag the note; "- [ ] item" lines make checklist items');
const pinned = z.boolean().describe('Keep the note at the top of the list');
const checklistMode = z.boolean().describe('Show the content as a checklist');

const READ = { readOnlyHint: true, openWorldHint: false } as const;

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
const write = (hints: { destructiveHint: boolean; idempotentHint: boolean }) => ({
  readOnlyHint: false,
  openWorldHint: false,
  ...hints,
});

/** One MCP server for one request, acting as `actor`; a read-only key gets only the read tools. */
export function buildMcpServer(actor: Actor, deps: McpDeps): McpServer {
  const { notes, revisions, search, tags } = deps;
  const server = new McpServer({ name: 'notes', version: APP_VERSION }, { instructions: INSTRUCTIONS });
  rejectUnknownArguments(server);

  /** Runs a tool body: its result becomes structuredContent (and JSON text for older clients). */
  async function run(body: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
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
  }

  server.registerTool(
    'search_notes',
    {
      title: 'Search notes',
      description:
        'Full-text search over the titles, contents and tags of your notes (trashed notes excluded), best ' +
        'matches first. Every word must match; the last word also matches as a prefix; "#word" matches a ' +
        'tag. Returns short summaries: call get_note for the full content.',
      inputSchema: {
        query: z
          .string()
          .min(1)
          .max(MAX_SEARCH_QUERY_LENGTH)
          .describe('Words to look for, e.g. "dentist" or "#groceries milk"'),
        limit: z.number().int().min(1).max(100).default(20).describe('At most this many results'),
      },
      outputSchema: { notes: z.array(NoteSummary) },
      annotations: READ,
    },
    ({ query, limit }) =>
      run(async () => ({ notes: (await search.search(actor, { q: query, limit })).map(summary) })),
  );

  server.registerTool(
    'list_notes',
    {
      title: 'List notes',
      description:
        'Lists your notes (and notes shared with you) in display order: pinned first, then by position, ' +
        'then most recently changed. filter "all" (the default) shows active notes, "archived" the archive, ' +
        '"trashed" the trash. Optionally narrow by tag, color or pinned. Returns short summaries, a page ' +
        'at a time: when nextCursor is not null, call again with it as cursor (and the same filters) for more.',
      inputSchema: {
        filter: z
          .enum(NOTE_FILTERS)
          .default('all')
          .describe('Which notes: all (active), archived or trashed'),
        tag: z.string().min(1).max(65).optional().describe('Only notes with this tag, without the #'),
        color: color.optional().describe('Only notes of this color'),
        pinned: z.boolean().optional().describe('true: only pinned notes; false: only unpinned ones'),
        limit: z.number().int().min(1).max(500).default(50).describe('At most this many notes per page'),
        cursor: z
          .string()
          .min(1)
          .max(200)
          .optional()
          .describe('nextCursor of the previous page; leave it out for the first page'),
      },
      outputSchema: {
        notes: z.array(NoteSummary),
        nextCursor: z
          .string()
          .nullable()
          .describe('Pass as cursor (with the same filters) for the next page; null on the last page'),
      },
      annotations: READ,
    },
    ({ cursor, ...query }) =>
      run(async () => {
        const page = await notes.listPage(actor, query, cursor);
        return { notes: page.notes.map(summary), nextCursor: page.nextCursor };
      }),
  );

  server.registerTool(
    'get_note',
    {
      title: 'Get a note',
      description: 'Returns one note in full: title, Markdown content, color, flags, tags and attachments.',
      inputSchema: { id: noteId },
      outputSchema: { note: NoteOut },
      annotations: READ,
    },
    ({ id }) => run(async () => ({ note: await notes.get(actor, id) })),
  );

  server.registerTool(
    'list_note_revisions',
    {
      title: 'List revisions of a note',
      description:
        'Lists the earlier titles and contents of a note, newest first (at least the last 50 versions or 30 ' +
        'days). Use it to see who changed what, or to recover lost text: restore a revision by passing its ' +
        'title and content to update_note.',
      inputSchema: { id: noteId },
      outputSchema: {
        revisions: z.array(RevisionOut).describe('One entry per version that changed title or content'),
      },
      annotations: READ,
    },
    ({ id }) => run(async () => ({ revisions: await revisions.list(actor, id) })),
  );

  server.registerTool(
    'list_tags',
    {
      title: 'List tags',
      description: 'Lists the tags used by your notes (not counting trashed ones), by name.',
      inputSchema: {},
      outputSchema: { tags: z.array(TagOut) },
      annotations: READ,
    },
    () => run(async () => ({ tags: await tags.list(actor) })),
  );

  server.registerResource(
    'note',
    new ResourceTemplate('note://{id}', {
      list: async () => ({
        resources: (await notes.list(actor, { filter: 'all', limit: 100 })).map((note) => ({
          uri: `note://${note.id}`,
          name: note.title || 'Untitled',
          mimeType: 'text/markdown',
        })),
      }),
    }),
    {
      title: 'Note',
      description: 'A note as Markdown: its title as a heading, then its content',
      mimeType: 'text/markdown',
    },
    async (uri, variables) => {
      try {
        const note = await notes.get(actor, String(variables.id));
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: markdown(note) }] };
      } catch (err) {
        if (err instanceof AppError)
          throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${err.message}`);
        throw err;
      }
    },
  );

  registerReminderTools(server, actor, deps.reminders, run);
  if (!canWrite(actor)) return server; // D-KEY-3: a read-only key sees only the above.

  server.registerTool(
    'create_note',
    {
      title: 'Create a note',
      description:
        'Creates a note and returns it. Every field is optional. For a checklist, set checklistMode and write ' +
        'the items as "- [ ] item" lines in content.',
      inputSchema: {
        title: title.optional(),
        content: content.optional(),
        color: color.optional(),
        pinned: pinned.optional(),
        checklistMode: checklistMode.optional(),
      },
      outputSchema: { note: NoteOut },
      annotations: write({ destructiveHint: false, idempotentHint: false }),
    },
    (input) => run(async () => ({ note: await notes.create(actor, input) })),
  );

  server.registerTool(
    'update_note',
    {
      title: 'Update a note',
      description:
        'Changes the given fields of a note and leaves the others as they are. Replacing content overwrites ' +
        'the whole body: to add text use append_to_note, to tick an item use set_checklist_item. Pass ' +
        'expectedVersion (from get_note) to refuse the change if someone edited the note meanwhile.',
      inputSchema: {
        id: noteId,
        title: title.optional(),
        content: content.optional(),
        color: color.optional(),
        pinned: pinned.optional(),
        checklistMode: checklistMode.optional(),
        expectedVersion: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe('Only update if the note has this version'),
      },
      outputSchema: { note: NoteOut },
      annotations: write({ destructiveHint: true, idempotentHint: true }),
    },
    ({ id, expectedVersion, ...fields }) =>
      run(async () => ({ note: await notes.update(actor, id, fields, expectedVersion) })),
  );

  server.registerTool(
    'append_to_note',
    {
      title: 'Append to a note',
      description:
        "Adds text at the end of a note's content, on a new line, without touching the rest. To add a " +
        'checklist item, append "- [ ] the item".',
      inputSchema: {
        id: noteId,
        text: z.string().min(1).max(MAX_CONTENT_LENGTH).describe('The text to add'),
      },
      outputSchema: { note: NoteOut },
      annotations: write({ destructiveHint: false, idempotentHint: false }),
    },
    ({ id, text }) => run(async () => ({ note: await notes.appendContent(actor, id, text) })),
  );

  server.registerTool(
    'set_checklist_item',
    {
      title: 'Check or uncheck a checklist item',
      description:
        'Checks or unchecks one checklist item ("- [ ] milk" / "- [x] milk" line) of a note. Choose the item ' +
        'by index (0 = the first item) or by text (an exact match, or else the one item containing it). ' +
        'When the item cannot be found the error lists the items.',
      inputSchema: {
        id: noteId,
        index: z.number().int().min(0).optional().describe('Position of the item among the items, from 0'),
        text: z.string().min(1).max(1_000).optional().describe("The item's text, or a unique part of it"),
        checked: z.boolean().describe('true to check the item, false to uncheck it'),
      },
      outputSchema: { note: NoteOut, item: ChecklistItemOut },
      annotations: write({ destructiveHint: false, idempotentHint: true }),
    },
    ({ id, index, text, checked }) =>
      run(async () => {
        if ((index === undefined) === (text === undefined)) {
          throw errors.validation('Give either index or text, not both and not neither');
        }
        const selector = index === undefined ? { text: text! } : { index };
        const { note, item } = await notes.setChecklistItem(actor, id, selector, checked);
        return { note, item: { index: item.index, text: item.text, checked: item.checked } };
      }),
  );

  const flagTool = (
    name: string,
    toolTitle: string,
    description: string,
    fields: { archived?: boolean; trashed?: boolean },
  ) =>
    server.registerTool(
      name,
      {
        title: toolTitle,
        description,
        inputSchema: { id: noteId },
        outputSchema: { note: NoteOut },
        annotations: write({ destructiveHint: false, idempotentHint: true }),
      },
      ({ id }) => run(async () => ({ note: await notes.update(actor, id, fields) })),
    );
  flagTool(
    'archive_note',
    'Archive a note',
    'Moves a note to the archive, out of the main list. Reversible with restore_note.',
    {
      archived: true,
    },
  );
  flagTool(
    'trash_note',
    'Move a note to the trash',
    'Moves a note to the trash. Trashed notes are deleted for good after a retention period; restore_note brings one back.',
    { trashed: true },
  );
  flagTool(
    'restore_note',
    'Restore a note',
    'Brings a note back from the trash or the archive to the active notes.',
    { trashed: false, archived: false },
  );

  server.registerTool(
    'delete_note',
    {
      title: 'Delete a note for good',
      description:
        'Deletes a note permanently, with its attachments. Only works on a note already in the trash ' +
        "(use trash_note first) and only for the note's owner. This cannot be undone.",
      inputSchema: { id: noteId },
      outputSchema: { deleted: z.literal(true), id: z.string() },
      annotations: write({ destructiveHint: true, idempotentHint: true }),
    },
    ({ id }) =>
      run(async () => {
        await notes.remove(actor, id, undefined, { onlyFromTrash: true });
        return { deleted: true, id };
      }),
  );

  return server;
}
