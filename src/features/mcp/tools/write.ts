import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Actor } from '../../../actor.js';
import { errors } from '../../../errors.js';
import { MAX_CONTENT_LENGTH, MAX_TITLE_LENGTH } from '../../../shared/api/limits.js';
import { isTimeZone, REPEATS } from '../../reminders/recurrence.js';
import { ChecklistItemOut, NoteOut, ReminderOut } from '../presenters.js';
import { color, type McpDeps, noteId, toolRunner } from './common.js';

const title = z.string().max(MAX_TITLE_LENGTH).describe('Plain-text title; may be empty');
const content = z
  .string()
  .max(MAX_CONTENT_LENGTH)
  .describe('Markdown body. Write #hashtags to tag the note; "- [ ] item" lines make checklist items');
const pinned = z.boolean().describe('Keep the note at the top of the list');
const checklistMode = z.boolean().describe('Show the content as a checklist');

const write = (hints: { destructiveHint: boolean; idempotentHint: boolean }) => ({
  readOnlyHint: false,
  openWorldHint: false,
  ...hints,
});

/** The tools that change notes: only for an actor that may write (D-KEY-3). */
export function register(server: McpServer, actor: Actor, deps: McpDeps): void {
  const { notes, reminders } = deps;
  const run = toolRunner(deps);

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
      annotations: write({ destructiveHint: false, idempotentHint: true }),
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
      annotations: write({ destructiveHint: true, idempotentHint: true }),
    },
    ({ noteId: id }) =>
      run(async () => {
        await reminders.clear(actor, id);
        return { noteId: id, cleared: true };
      }),
  );

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
}
