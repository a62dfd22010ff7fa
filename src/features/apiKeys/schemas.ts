import { type Static, Type } from 'typebox';
import { ALL_SCOPES, type Scope } from '../../actor.js';

export const MAX_KEY_NAME_LENGTH = 100; // D-KEY-1

const ScopeSchema = Type.Unsafe<Scope>({ type: 'string', enum: [...ALL_SCOPES] });

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

export const ApiKey = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    keyPrefix: Type.String({ description: 'The first 12 characters of the key, to recognise it' }),
    scopes: Type.Array(ScopeSchema),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Null until first use; updated at most once a minute',
    }),
  },
  { $id: 'ApiKey', title: 'ApiKey' },
);
export type ApiKey = Static<typeof ApiKey>;

/** The key as listed (never used yet), plus the full key: the one response that shows it. */
export const CreatedApiKey = Type.Object(
  {
    ...Type.Omit(ApiKey, ['lastUsedAt']).properties,
    key: Type.String({ description: 'The full key; shown only in this response' }),
  },
  { title: 'ApiKeyCreated' },
);
export type CreatedApiKey = Static<typeof CreatedApiKey>;
