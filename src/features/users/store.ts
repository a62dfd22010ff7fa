import type { Selectable } from 'kysely';
import type { Db } from '../../db/connection.js';
import type { UsersTable } from '../../db/schema.js';

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
