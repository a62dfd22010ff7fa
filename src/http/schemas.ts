import { type Static, Type } from 'typebox';
import { Uuid } from '../shared/api/ids.js';

/** D-ERR-1 error body; every 4xx/5xx response uses it. */
export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    code: Type.String({ description: 'Stable snake_case identifier clients may switch on' }),
    message: Type.String(),
    details: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
        description: 'Present on validation errors: which field and why',
      }),
    ),
  },
  { $id: 'ErrorBody', title: 'Error' },
);

export const Success = Type.Object({ success: Type.Boolean() }, { $id: 'Success', title: 'Success' });
export type Success = Static<typeof Success>;

/**
 * `{id}` of every /api/notes/{id}… route. An id that is not a uuid names no note: the error
 * handler answers it like an unknown note, 404 note_not_found (D-ERR-2), whatever its length.
 */
export const NoteIdParams = Type.Object({ id: Uuid });

/** A response map entry for each error status a route may answer. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorRef> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorRef]));
}
export const ErrorRef = Type.Ref('ErrorBody');

/** A response header as the OpenAPI document describes it (see withHeaders). */
export interface HeaderDoc {
  type: 'string' | 'integer';
  description: string;
}

/**
 * A response schema plus the headers the route sends with it. Only the OpenAPI document reads
 * `headers` (@fastify/swagger turns it into the response's header list); the serializer ignores it.
 */
export function withHeaders<T extends object>(schema: T, headers: Record<string, HeaderDoc>): T {
  return { ...schema, headers };
}
