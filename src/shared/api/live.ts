/** The live stream's wire shapes (docs/sync.md#live-hints), shared by the server and the web app. */
import { type Static, Type } from 'typebox';
import { Uuid } from './ids.js';

/** The `data` of an `event: notes`. */
export const NotesEventData = Type.Object(
  { ids: Type.Array(Uuid, { description: 'The notes that changed for you' }) },
  { description: 'The `data` of an `event: notes`' },
);

/** The `data` of an `event: presence`: someone else opened or closed a note you can see. */
export const PresenceEventData = Type.Object(
  {
    noteId: Uuid,
    userId: Type.Integer({ description: 'Who opened or closed it' }),
    name: Type.String({ description: 'Their display name' }),
    here: Type.Boolean({ description: 'true: they opened the note; false: they closed it' }),
  },
  { description: 'The `data` of an `event: presence`' },
);
export type PresenceEventData = Static<typeof PresenceEventData>;

/** POST /api/notes/{id}/presence. */
export const PresenceBody = Type.Object(
  { here: Type.Boolean({ description: 'true: you opened the note; false: you closed it' }) },
  { additionalProperties: false },
);
