import { type Static, Type } from 'typebox';
import { ALL_SCOPES, ScopeSchema } from '../../shared/api/apiKeys.js';

export const MAX_KEY_NAME_LENGTH = 100; // D-KEY-1

export const CreateApiKeyBody = Type.Object({
  // Checked again after trimming in the service; the raw limit only keeps bodies small.
  name: Type.String({ minLength: 1, maxLength: 1_000, description: 'A label for you; 1–100 characters' }),
  scopes: Type.Optional(
    Type.Array(ScopeSchema, {
      minItems: 1,
      maxItems: ALL_SCOPES.length,
      description: 'notes:read, notes:write or both (the default). notes:write includes reading.',
    }),
  ),
});
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

/** Any string: an id that is not one of your keys is simply not found. */
export const ApiKeyIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
