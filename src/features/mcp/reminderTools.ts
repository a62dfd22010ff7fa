import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type Actor, canWrite } from '../../actor.js';
import { isTimeZone, REPEATS } from '../reminders/recurrence.js';
import type { RemindersService } from '../reminders/service.js';
import { ReminderOut } from './presenters.js';

type Run = (body: () => Promise<Record<string, unknown>>) => Promise<CallToolResult>;

const noteId = z.string().uuid().describe('The id (a UUID) of the note');
const ListedReminderOut = ReminderOut.extend({ noteId: z.string(), title: z.string() });

/** list_reminders for every key; set_reminder and clear_reminder for keys that may write (D-KEY-3). */
export function registerReminderTools(
  server: McpServer,
  actor: Actor,
  reminders: RemindersService,
  run: Run,
) {
  server.registerTool(
    'list_reminders',
    {
      title: 'List reminders',
      description: 'Your reminders, the next to ring first, with the title of each note.',
      inputSchema: {},
      outputSchema: { reminders: z.array(ListedReminderOut) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => run(async () => ({ reminders: await reminders.list(actor) })),
  );
  if (!canWrite(actor)) return;

  server.registerTool(
    'set_reminder',
    {
      title: 'Set a reminder on a note',
      description:
        'Makes the note ring on your devices at a time ("remind me to call mum tomorrow at 6": create or ' +
        'find the note, then set its reminder). Replaces your earlier reminder on that note. Only you see it.',
      inputSchema: {
        noteId,
        at: z
          .string()
          .datetime({ offset: true })
          .describe('When it rings, ISO 8601 with an offset, e.g. 2026-05-01T18:00:00+02:00'),
        repeat: z.enum(REPEATS).default('none').describe('Ring again every day, week, month or year'),
        timeZone: z
          .string()
          .refine(isTimeZone, 'must be an IANA time zone such as Europe/Berlin')
          .default('UTC')
          .describe("The user's IANA time zone; repeats keep the local time there"),
      },
      outputSchema: { noteId: z.string(), reminder: ReminderOut.nullable() },
      annotations: {
        readOnlyHint: false,
        openWorldHint: false,
        destructiveHint: false,
        idempotentHint: true,
      },
    },
    ({ noteId: id, at, repeat, timeZone }) =>
      run(async () => ({ noteId: id, reminder: await reminders.set(actor, id, { at, repeat, timeZone }) })),
  );

  server.registerTool(
    'clear_reminder',
    {
      title: 'Clear a reminder',
      description: 'Removes your reminder from the note; it will not ring.',
      inputSchema: { noteId },
      outputSchema: { noteId: z.string(), cleared: z.literal(true) },
      annotations: { readOnlyHint: false, openWorldHint: false, destructiveHint: true, idempotentHint: true },
    },
    ({ noteId: id }) =>
      run(async () => {
        await reminders.clear(actor, id);
        return { noteId: id, cleared: true };
      }),
  );
}
