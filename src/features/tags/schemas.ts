import { type Static, Type } from 'typebox';

/** A tag as one user sees it: its per-user id (D-TAG-2) and its name. */
export const Tag = Type.Object({ id: Type.Integer(), name: Type.String() }, { $id: 'Tag', title: 'Tag' });
export type Tag = Static<typeof Tag>;
