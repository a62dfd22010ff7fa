import { type Static, Type } from 'typebox';

/** One revision of a note's text (D-SYNC-9). */
export const NoteRevision = Type.Object(
  {
    version: Type.Integer({ description: 'The note version this text belongs to' }),
    createdAt: Type.String({ format: 'date-time', description: 'When that version was stored' }),
    authorId: Type.Integer({ description: 'The user whose write made this version' }),
    title: Type.String(),
    content: Type.String(),
  },
  { $id: 'NoteRevision', title: 'NoteRevision' },
);
export type NoteRevision = Static<typeof NoteRevision>;

export const NoteRevisionList = Type.Array(Type.Ref('NoteRevision'));
