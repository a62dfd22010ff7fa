import { randomUUID } from 'node:crypto';
import type { Actor } from '../../actor.js';
import { type Clock, iso } from '../../clock.js';
import { randomToken, sha256Hex } from '../../crypto.js';
import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import { ALL_SCOPES, type ApiKey, type CreatedApiKey, type Scope } from '../../shared/api/apiKeys.js';
import { type CreateApiKeyBody, MAX_KEY_NAME_LENGTH } from './schemas.js';
import * as store from './store.js';

const KEY_PREFIX = 'nsk_';
const KEY_PREFIX_LENGTH = 12; // D-KEY-1
/** `nsk_` + 32 random bytes in base64url (43 characters). */
const KEY_PATTERN = /^nsk_[A-Za-z0-9_-]{43}$/;
const LAST_USED_RESOLUTION_MS = 60_000; // D-KEY-1: written at most once a minute

/** notes:write includes reading, so a stored key always has notes:read (D-KEY-3). */
function normaliseScopes(requested: readonly Scope[] | undefined): Scope[] {
  const wanted = new Set<Scope>(requested ?? ALL_SCOPES);
  if (wanted.has('notes:write')) wanted.add('notes:read');
  return ALL_SCOPES.filter((s) => wanted.has(s));
}

function parseScopes(stored: string): Scope[] {
  return stored.split(' ').filter((s): s is Scope => (ALL_SCOPES as readonly string[]).includes(s));
}

function apiKeyView(row: store.ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    keyPrefix: row.key_prefix,
    scopes: parseScopes(row.scopes),
    createdAt: iso(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : iso(row.last_used_at),
  };
}

export function createApiKeysService({ db, clock }: { db: Db; clock: Clock }) {
  return {
    async list(actor: Actor): Promise<ApiKey[]> {
      return (await store.listApiKeys(db, actor.userId)).map(apiKeyView);
    },

    /** The full key is returned here once and never again (D-KEY-1). */
    async create(actor: Actor, input: CreateApiKeyBody): Promise<CreatedApiKey> {
      const name = input.name.trim();
      if (name.length === 0 || name.length > MAX_KEY_NAME_LENGTH) {
        throw errors.invalidField('/name', `must be 1 to ${MAX_KEY_NAME_LENGTH} characters after trimming`);
      }
      const key = `${KEY_PREFIX}${randomToken()}`;
      const row: store.ApiKeyRow = {
        id: randomUUID(),
        user_id: actor.userId,
        name,
        key_hash: sha256Hex(key),
        key_prefix: key.slice(0, KEY_PREFIX_LENGTH),
        scopes: normaliseScopes(input.scopes).join(' '),
        created_at: clock.now(),
        last_used_at: null,
      };
      await store.insertApiKey(db, row);
      const { lastUsedAt: _, ...view } = apiKeyView(row);
      return { ...view, key };
    },

    /** Revocation is a delete: the next request with the key finds nothing (D-KEY-2). */
    async revoke(actor: Actor, keyId: string): Promise<void> {
      if (!(await store.deleteApiKey(db, actor.userId, keyId))) {
        throw errors.apiKeyNotFound();
      }
    },

    /** Which of these keys (by id) are not revoked: the live streams' check. */
    async existingKeys(keyIds: readonly string[]): Promise<Set<string>> {
      return store.existingApiKeys(db, keyIds);
    },

    /** The actor behind a Bearer key, or null for a malformed, unknown or revoked key. */
    async authenticate(key: string): Promise<Actor | null> {
      if (!KEY_PATTERN.test(key)) return null;
      const found = await store.findKeyUser(db, sha256Hex(key));
      if (!found) return null;
      const now = clock.now();
      if (found.last_used_at === null || now - found.last_used_at >= LAST_USED_RESOLUTION_MS) {
        await store.touchApiKey(db, found.id, now);
      }
      return {
        userId: found.user_id,
        isOwner: found.is_owner === 1,
        via: 'key',
        scopes: new Set(parseScopes(found.scopes)),
        keyId: found.id,
      };
    },
  };
}
