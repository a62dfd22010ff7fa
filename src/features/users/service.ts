import type { Actor } from '../../actor.js';
import type { Db } from '../../db/connection.js';
import { errors } from '../../errors.js';
import type { UserRow } from './store.js';
import * as store from './store.js';

export interface UserProfile {
  id: number;
  email: string;
  displayName: string;
  isOwner: boolean;
}

export function userProfile(user: UserRow): UserProfile {
  return { id: user.id, email: user.email, displayName: user.display_name, isOwner: user.is_owner === 1 };
}

/** True when another user already has this email, ignoring case. */
export async function emailTaken(db: Db, email: string, exceptUserId?: number): Promise<boolean> {
  if (email === '') return false;
  const other = await store.findUserByEmail(db, email);
  return other !== undefined && other.id !== exceptUserId;
}

export function createUsersService({ db }: { db: Db }) {
  return {
    /** PATCH /api/users/me (D-AUTH-6). */
    async updateMe(actor: Actor, input: { email?: string; displayName?: string }): Promise<UserProfile> {
      const patch: { email?: string; display_name?: string } = {};
      if (input.email !== undefined) patch.email = input.email.trim();
      if (input.displayName !== undefined) {
        patch.display_name = input.displayName.trim();
        if (patch.display_name === '')
          throw errors.validation('displayName must not be blank', [
            { path: '/displayName', message: 'must contain a non-space character' },
          ]);
      }
      const updated = await db.transaction().execute(async (trx) => {
        if (patch.email !== undefined && (await emailTaken(trx, patch.email, actor.userId))) {
          throw errors.conflict('email_taken', 'Another user already has this email');
        }
        if (Object.keys(patch).length === 0) return store.findUserById(trx, actor.userId);
        return store.updateUser(trx, actor.userId, patch);
      });
      if (!updated) throw errors.unauthenticated();
      return userProfile(updated);
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
