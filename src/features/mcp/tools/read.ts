import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Actor } from '../../../actor.js';
import { NOTE_FILTERS } from '../../../shared/api/notes.js';
import { MAX_SEARCH_QUERY_LENGTH } from '../../search/schemas.js';
import { markdown, NoteOut, NoteSummary, ReminderOut, RevisionOut, summary, TagOut } from '../presenters.js';
import { NOTE_URI_TEMPLATE, noteUri } from '../resources.js';
import { asResourceError, color, type McpDeps, noteId, toolRunner } from './common.js';

const READ = { readOnlyHint: true, openWorldHint: false } as const;

const ListedReminderOut = ReminderOut.extend({ noteId: z.string(), title: z.string() });

/** The tools and the resource that only read: every key gets them, a read-only one too (D-KEY-3). */
export function register(server: McpServer, actor: Actor, deps: McpDeps): void {
  const { notes, revisions, search, tags, reminders } = deps;
  const run = toolRunner(deps);

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
    new ResourceTemplate(NOTE_URI_TEMPLATE, {
      list: async () => ({
        resources: (await notes.list(actor, { filter: 'all', limit: 100 })).map((note) => ({
          uri: noteUri(note.id),
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
    (uri, variables) =>
      asResourceError(async () => {
        const note = await notes.get(actor, String(variables.id));
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: markdown(note) }] };
      }),
  );

  server.registerTool(
    'list_reminders',
    {
      title: 'List reminders',
      description: 'Your reminders, the next to ring first, with the title of each note.',
      inputSchema: {},
      outputSchema: { reminders: z.array(ListedReminderOut) },
      annotations: READ,
    },
    () => run(async () => ({ reminders: await reminders.list(actor) })),
  );
}
