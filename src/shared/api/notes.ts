/**
 * The note's wire shapes (docs/interface.md), one definition for the server's validation,
 * serialization and OpenAPI document and for the web app, which imports their types.
 */
import { type Static, Type } from 'typebox';
import { NOTE_COLORS, type NoteColor } from '../colors.js';
import { MAX_CONTENT_LENGTH, MAX_TITLE_LENGTH } from './limits.js';
import { type Reminder, ReminderInput } from './reminders.js';

export const Color = Type.Unsafe<NoteColor>({ type: 'string', enum: [...NOTE_COLORS] });

/** Every field optional (D-NOTE-1); unknown and read-only fields are ignored (D-NOTE-2). */
export const NoteInput = Type.Object(
  {
    id: Type.Optional(Type.String({ format: 'uuid' })),
    title: Type.Optional(Type.String({ maxLength: MAX_TITLE_LENGTH })),
    content: Type.Optional(Type.String({ maxLength: MAX_CONTENT_LENGTH })),
    color: Type.Optional(Color),
    pinned: Type.Optional(Type.Boolean()),
    archived: Type.Optional(Type.Boolean()),
    trashed: Type.Optional(Type.Boolean()),
    checklistMode: Type.Optional(Type.Boolean()),
    sortOrder: Type.Optional(
      Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
    ),
    reminder: Type.Optional(
      Type.Union([ReminderInput, Type.Null()], {
        description: 'Your own reminder on the note (docs/reminders.md); null removes it',
      }),
    ),
  },
  { $id: 'NoteInput', title: 'NoteInput' },
);
export type NoteInput = Static<typeof NoteInput>;

export const Attachment = Type.Object(
  {
    id: Type.String(),
    noteId: Type.String(),
    filename: Type.String(),
    mimeType: Type.String(),
    size: Type.Integer(),
    thumbnailPath: Type.Union([Type.String(), Type.Null()]),
    width: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'Pixels wide as shown (EXIF orientation applied); null for an image stored before the server measured them',
    }),
    height: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Pixels high as shown; null when width is',
    }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Attachment', title: 'Attachment' },
);
export type Attachment = Static<typeof Attachment>;

export const Note = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    ownerId: Type.Integer({ description: 'The owning user (D-NOTE-7)' }),
    title: Type.String(),
    content: Type.String(),
    color: Color,
    pinned: Type.Boolean(),
    archived: Type.Boolean(),
    trashed: Type.Boolean(),
    trashedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    checklistMode: Type.Boolean(),
    sortOrder: Type.Integer(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    version: Type.Integer({ description: 'Starts at 1, +1 on every stored change (D-NOTE-3)' }),
    tags: Type.Array(Type.String()),
    attachments: Type.Array(Type.Ref('Attachment')),
    reminder: Type.Union([Type.Ref('Reminder'), Type.Null()], {
      description: "The reader's own reminder on the note; nobody else sees it (docs/reminders.md)",
    }),
  },
  { $id: 'Note', title: 'Note' },
);
export interface Note extends Omit<Static<typeof Note>, 'attachments' | 'color' | 'reminder'> {
  color: NoteColor;
  attachments: Attachment[];
  reminder: Reminder | null;
}

export const NOTE_FILTERS = ['all', 'archived', 'trashed'] as const;
export type NoteFilter = (typeof NOTE_FILTERS)[number];
