import { type Static, Type } from 'typebox';
import type { HeaderDoc } from '../../http/schemas.js';
import { MAX_SYNC_CHANGES } from '../../shared/api/limits.js';
import { SyncChange, SyncResult } from '../../shared/api/sync.js';

export const SYNC_BODY_LIMIT = 16 * 1024 * 1024; // D-ERR-5

/** Unix milliseconds, as every sync timestamp is (D-ERR-4). */
const UnixMs = (description: string) =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

/** Sent with every pull (D-SYNC-1): the `since` of the next one. */
export const SyncTimeHeader: HeaderDoc = {
  type: 'integer',
  description: 'Unix milliseconds: pass it as `since` on your next pull',
};

export const SinceQuery = Type.Object({
  since: UnixMs('Pass the X-Sync-Time of your previous pull; 0 for everything'),
});
export type SinceQuery = Static<typeof SinceQuery>;

export const SyncPush = Type.Object({
  changes: Type.Array(SyncChange, { maxItems: MAX_SYNC_CHANGES }),
});
export type SyncPush = Static<typeof SyncPush>;

export const SyncPushAnswer = Type.Object({
  success: Type.Boolean(),
  results: Type.Array(SyncResult),
});
export type SyncPushAnswer = Static<typeof SyncPushAnswer>;
