import { type Selectable, sql } from 'kysely';
import { containsIgnoringCase } from '../db/dialect.js';
import type { UsersTable } from '../db/schema.js';
import type { Db } from '../db/types.js';

export type UserRow = Selectable<UsersTable>;

export async function hasOwner(db: Db): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('is_owner', '=', 1).executeTakeFirst();
  return row !== undefined;
}

export async function findOwner(db: Db): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('is_owner', '=', 1).executeTakeFirst();
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .where('email', '<>', '')
    .executeTakeFirst();
}

export async function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The display names of these users (those that exist). */
export async function displayNamesOf(db: Db, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'display_name']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row.display_name]));
}

export async function insertUser(db: Db, user: Omit<UserRow, 'id'>): Promise<UserRow> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

export async function updateUser(
  db: Db,
  id: number,
  patch: Partial<Pick<UserRow, 'email' | 'display_name' | 'password_hash'>>,
): Promise<UserRow> {
  return db.updateTable('users').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Sets a new password hash only if the stored one is still `current`. */
export async function replacePasswordHash(db: Db, id: number, current: string, next: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: next })
    .where('id', '=', id)
    .where('password_hash', '=', current)
    .execute();
}

export async function listUsers(db: Db): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('id').execute();
}

/** Users other than `exceptUserId` whose email or display name contains `text`, ignoring case. */
export async function searchUsers(db: Db, text: string, exceptUserId: number, limit: number) {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'display_name'])
    .where('id', '<>', exceptUserId)
    .where((eb) => eb.or([containsIgnoringCase('email', text), containsIgnoringCase('display_name', text)]))
    .orderBy(sql`lower(display_name)`)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Removes the user row; sessions, collaborations and tombstones go with it (foreign-key cascades). */
export async function deleteUser(db: Db, id: number): Promise<void> {
  await db.deleteFrom('users').where('id', '=', id).execute();
}
