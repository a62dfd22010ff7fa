import { Type } from 'typebox';

/** Note ids, attachment ids, conflict copies: every id the API hands out or takes is a UUID. */
export const Uuid = Type.String({ format: 'uuid', description: 'A UUID' });
