import { z } from 'zod';
import type { Note } from '../../shared/api/notes.js';
import { REPEATS } from '../../shared/api/reminders.js';
import { NOTE_COLORS } from '../../shared/colors.js';

/**
 * What the MCP tools return, as zod schemas (the SDK describes and checks tool output with zod),
 * and the MCP-only views of a note. The note, attachment, revision and tag shapes are the REST ones
 * (src/shared/api/notes.ts, revisions/ and tags/schemas.ts) written again in zod: test/mcp-shapes.test.ts fails
 * when the two drift apart, at compile time and against real REST answers.
 */

export const EXCERPT_LENGTH = 280;

export const AttachmentOut = z.object({
  id: z.string(),
  noteId: z.string(),
  filename: z.string(),
  mimeType: z.string(),
  size: z.number().int(),
  thumbnailPath: z.string().nullable(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  createdAt: z.string(),
});

export const ReminderOut = z.object({
  at: z.string(),
  repeat: z.enum(REPEATS),
  timeZone: z.string(),
  nextAt: z.string().nullable().describe('When it rings next; null once a one-off reminder has rung'),
});

export const NoteOut = z.object({
  id: z.string(),
  ownerId: z.number().int().describe('The user who owns the note; others may be shared with you'),
  title: z.string(),
  content: z.string(),
  color: z.enum(NOTE_COLORS),
  pinned: z.boolean(),
  archived: z.boolean(),
  trashed: z.boolean(),
  trashedAt: z.string().nullable(),
  checklistMode: z.boolean(),
  sortOrder: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number().int().describe('Increases by one with every change'),
  tags: z.array(z.string()),
  attachments: z.array(AttachmentOut),
  reminder: ReminderOut.nullable().describe('Your own reminder on the note; nobody else sees it'),
});

/** A note in a list: its fields but content, which is cut to an excerpt. */
export const NoteSummary = NoteOut.pick({
  id: true,
  title: true,
  tags: true,
  color: true,
  pinned: true,
  archived: true,
  trashed: true,
  checklistMode: true,
  updatedAt: true,
  version: true,
}).extend({
  excerpt: z.string().describe(`The first ${EXCERPT_LENGTH} characters of the content; get_note has it all`),
});
export type NoteSummary = z.infer<typeof NoteSummary>;

export const RevisionOut = z.object({
  version: z.number().int().describe('The note version this text belongs to'),
  createdAt: z.string().describe('When that version was stored (ISO 8601)'),
  authorId: z.number().int().describe('The user whose edit made this version'),
  title: z.string(),
  content: z.string(),
});

export const TagOut = z.object({ id: z.number().int(), name: z.string() });

export const ChecklistItemOut = z.object({
  index: z.number().int(),
  text: z.string(),
  checked: z.boolean(),
});

export function summary(note: Note): NoteSummary {
  const excerpt =
    note.content.length > EXCERPT_LENGTH ? `${note.content.slice(0, EXCERPT_LENGTH)}…` : note.content;
  return {
    id: note.id,
    title: note.title,
    excerpt,
    tags: note.tags,
    color: note.color,
    pinned: note.pinned,
    archived: note.archived,
    trashed: note.trashed,
    checklistMode: note.checklistMode,
    updatedAt: note.updatedAt,
    version: note.version,
  };
}

/** A note as the `note://{id}` resource: its title as a heading, its content, then its tags. */
export function markdown(note: Note): string {
  const tags = note.tags.length > 0 ? `\n\nTags: ${note.tags.map((t) => `#${t}`).join(' ')}` : '';
  return `# ${note.title || 'Untitled'}\n\n${note.content}${tags}`;
}
