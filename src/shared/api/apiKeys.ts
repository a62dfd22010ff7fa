/** API keys on the wire (docs/api-keys.md), shared by the server's schemas and the web app. */
import { type Static, Type } from 'typebox';

export type Scope = 'notes:read' | 'notes:write';
export const ALL_SCOPES: readonly Scope[] = ['notes:read', 'notes:write'];

export const ScopeSchema = Type.Unsafe<Scope>({ type: 'string', enum: [...ALL_SCOPES] });

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
