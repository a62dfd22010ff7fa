import { type Static, Type } from 'typebox';
import type { HeaderDoc } from '../../http/schemas.js';
import { Color, NOTE_FILTERS, type NoteFilter } from '../../shared/api/notes.js';

export const NoteList = Type.Array(Type.Ref('Note'));

export const ListNotesQuery = Type.Object({
  filter: Type.Optional(Type.Unsafe<NoteFilter>({ type: 'string', enum: [...NOTE_FILTERS] })),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 65, description: 'Only notes with this tag' })),
  color: Type.Optional(Color),
});
export type ListNotesQuery = Static<typeof ListNotesQuery>;

/** `ETag: "<version>"` on every answer that is one note (D-NOTE-3). */
export const NoteETag: HeaderDoc = {
  type: 'string',
  description: 'The note\'s version in quotes, e.g. "3": send it back as If-Match',
};

export const ListETag: HeaderDoc = {
  type: 'string',
  description:
    'Names this list of notes at these versions: send it back as If-None-Match to get 304 while nothing in it changed',
};

/** `If-Match: "<version>"` (D-NOTE-3). */
export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ maxLength: 100 })),
});
