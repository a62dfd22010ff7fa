import type { Selectable } from 'kysely';
import { inJsonList } from '../../db/dialect.js';
import { fastStatement } from '../../db/fastPath.js';
import { keptWhileTablesUnchanged } from '../../db/keptReads.js';
import type { ApiKeysTable } from '../../db/schema.js';
import type { Db } from '../../db/types.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

export async function insertApiKey(db: Db, key: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(key).execute();
}

export async function listApiKeys(db: Db, userId: number): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

/** Deletes a key of this user; false when there is none (another user's key included). */
export async function deleteApiKey(db: Db, userId: number, keyId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('api_keys')
    .where('id', '=', keyId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The key's user: the start of every request that carries an API key. */
interface KeyUser {
  id: string;
  scopes: string;
  last_used_at: number | null;
  user_id: number;
  is_owner: number;
}

/** Keys' users as last read, until a key or user changes (db/keptReads.ts, decision 0048). */
const keptKeyUsers = keptWhileTablesUnchanged<KeyUser>({
  name: 'key_users',
  tables: ['api_keys', 'users'],
  max: 10_000,
});

export async function findKeyUser(db: Db, keyHash: string): Promise<KeyUser | undefined> {
  return keptKeyUsers(db, keyHash, () =>
    keyUserStatement.getOr(db, [keyHash], () => findKeyUserWithKysely(db, keyHash)),
  );
}

export async function findKeyUserWithKysely(db: Db, keyHash: string): Promise<KeyUser | undefined> {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .select(['k.id', 'k.scopes', 'k.last_used_at', 'u.id as user_id', 'u.is_owner'])
    .where('k.key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** findKeyUser's SQLite fast path (db/fastPath.ts); test/fast-paths.test.ts pins it to the above. */
export const keyUserStatement = fastStatement<[keyHash: string], KeyUser>(
  `SELECT k.id, k.scopes, k.last_used_at, u.id AS user_id, u.is_owner FROM api_keys k
   JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?`,
);

/** Which of these keys still exist (revocation deletes them): the live streams' check. */
export async function existingApiKeys(db: Db, keyIds: readonly string[]): Promise<Set<string>> {
  if (keyIds.length === 0) return new Set();
  const rows = await db.selectFrom('api_keys').select('id').where('id', 'in', inJsonList(keyIds)).execute();
  return new Set(rows.map((row) => row.id));
}

export async function touchApiKey(db: Db, keyId: string, now: number): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', keyId).execute();
}
