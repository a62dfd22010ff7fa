import { type Actor, requireInstanceOwner } from '../../actor.js';
import type { Clock } from '../../clock.js';
import { transaction } from '../../db/transaction.js';
import type { Db } from '../../db/types.js';
import { detailPath, errors } from '../../errors.js';
import { notesToDeleteBySystemRule } from '../../model/noteAccess.js';
import { notesOwnedBy } from '../../model/notes.js';
import { deleteNotesForGood } from '../../model/noteWrites.js';
import type { UserRow } from '../../model/users.js';
import * as store from '../../model/users.js';
import type { UserProfile, UserSummary } from '../../shared/api/people.js';
import type { NotesService } from '../notes/service.js';
import type { PasswordHasher } from './passwords.js';
import { type CreateUserBody, MAX_USER_SEARCH_RESULTS, type UpdateMeBody } from './schemas.js';

export function userProfile(user: UserRow): UserProfile {
  return { id: user.id, email: user.email, displayName: user.display_name, isOwner: user.is_owner === 1 };
}

function userSummary(user: Pick<UserRow, 'id' | 'email' | 'display_name'>): UserSummary {
  return { id: user.id, displayName: user.display_name, email: user.email };
}

/** True when another user already has this email, ignoring case. */
async function emailTaken(db: Db, email: string, exceptUserId?: number): Promise<boolean> {
  if (email === '') return false;
  const other = await store.findUserByEmail(db, email);
  return other !== undefined && other.id !== exceptUserId;
}

/** A display name is trimmed and must keep a non-space character. */
function displayName(value: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw errors.invalidField('/displayName', 'must contain a non-space character');
  return trimmed;
}

/** The caller's own row; gone only when the user was removed while the request ran. */
function profileOf(user: UserRow | undefined): UserProfile {
  if (!user) throw errors.unauthenticated();
  return userProfile(user);
}

export function createUsersService({
  db,
  clock,
  notes,
  passwords,
}: {
  db: Db;
  clock: Clock;
  notes: NotesService;
  passwords: PasswordHasher;
}) {
  return {
    /** GET /api/users/me: the caller's profile, by session or API key (D-KEY-2). */
    async me(actor: Actor): Promise<UserProfile> {
      return profileOf(await store.findUserById(db, actor.userId));
    },

    /** PATCH /api/users/me (D-AUTH-6). */
    async updateMe(actor: Actor, input: UpdateMeBody): Promise<UserProfile> {
      const patch: { email?: string; display_name?: string } = {};
      if (input.email !== undefined) patch.email = input.email.trim();
      if (input.displayName !== undefined) patch.display_name = displayName(input.displayName);
      // Alone: a profile edit is rare; group commit is for the frequent note writes (decision 0025).
      const updated = await transaction(
        db,
        async (trx) => {
          if (patch.email !== undefined && (await emailTaken(trx, patch.email, actor.userId))) {
            throw errors.emailTaken();
          }
          if (Object.keys(patch).length === 0) return store.findUserById(trx, actor.userId);
          return store.updateUser(trx, actor.userId, patch);
        },
        { group: false },
      );
      return profileOf(updated);
    },

    /** POST /api/users: the owner adds a user; there is no self-registration (D-AUTH-2). */
    async create(actor: Actor, input: CreateUserBody): Promise<UserSummary> {
      requireInstanceOwner(actor);
      const { email } = input; // the email format admits no spaces
      const name = displayName(input.displayName);
      const passwordHash = await passwords.hash(input.password);
      // Alone: adding a user is rare; group commit is for the frequent note writes (decision 0025).
      const user = await transaction(
        db,
        async (trx) => {
          if (await emailTaken(trx, email)) throw errors.emailTaken();
          return store.insertUser(trx, {
            email,
            display_name: name,
            password_hash: passwordHash,
            is_owner: 0,
            created_at: clock.now(),
          });
        },
        { group: false },
      );
      return userSummary(user);
    },

    /** GET /api/users: every user, the owner included (D-AUTH-2). */
    async list(actor: Actor): Promise<UserProfile[]> {
      requireInstanceOwner(actor);
      return (await store.listUsers(db)).map(userProfile);
    },

    /**
     * DELETE /api/users/{id}: the user and everything they own (D-AUTH-2). Their notes go
     * through deleteNotesForGood, so collaborators get tombstones and attachment files are
     * removed after the commit; sessions, keys and their own collaborations follow the user row
     * by foreign-key cascade.
     */
    async remove(actor: Actor, userId: number): Promise<void> {
      requireInstanceOwner(actor);
      if (userId === actor.userId) throw errors.cannotDeleteOwner();
      // Alone: deleting a user deletes all their notes, a long transaction a group would wait behind.
      const removedAttachments = await transaction(
        db,
        async (trx) => {
          if (!(await store.findUserById(trx, userId))) throw errors.userNotFound();
          const owned = notesToDeleteBySystemRule(await notesOwnedBy(trx, userId));
          const removed = await deleteNotesForGood(trx, owned, clock.now());
          await store.deleteUser(trx, userId);
          return removed;
        },
        { group: false },
      );
      await notes.notifyDeleted(removedAttachments);
    },

    /** GET /api/users/search (D-COLLAB-3): substring of email or display name, caller excluded. */
    async search(actor: Actor, query: string): Promise<UserSummary[]> {
      const text = query.trim();
      if (text === '')
        throw errors.invalidField(detailPath('/q', 'querystring'), 'must contain a non-space character');
      return (await store.searchUsers(db, text, actor.userId, MAX_USER_SEARCH_RESULTS)).map(userSummary);
    },
  };
}
