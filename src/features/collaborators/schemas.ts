import { Type } from 'typebox';

export const CollaboratorList = Type.Array(Type.Ref('Collaborator'));

/** D-COLLAB-2: a positive integer; anything else (missing, 0, "7", 1.5) is 400. */
export const AddCollaboratorBody = Type.Object({
  userId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
});

/** D-COLLAB-2: a positive integer user id, or `self` for the caller leaving the note. */
export const RemoveCollaboratorQuery = Type.Object({
  userId: Type.String({
    pattern: '^(self|[1-9][0-9]{0,14})$',
    description: 'A user id, or self to leave the note',
  }),
});

export type CollaboratorTarget = number | 'self';
