import { type Actor, type NewSession, type ResolvedSession, sessionActor } from '../../actor.js';
import type { Clock } from '../../clock.js';
import { randomToken, sha256Hex } from '../../crypto.js';
import { transaction } from '../../db/transaction.js';
import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import * as users from '../../model/users.js';
import type { PasswordHasher } from '../users/passwords.js';
import { userProfile } from '../users/service.js';
import * as store from './store.js';

const SESSION_MAX_AGE_MS = 30 * 86_400_000; // D-AUTH-4

/** A new session of the user: the same cookie whether they signed in by password or single sign-on. */
export async function startSession(db: Db, clock: Clock, userId: number): Promise<NewSession> {
  const token = randomToken();
  const now = clock.now();
  await store.insertSession(db, {
    token_hash: sha256Hex(token),
    user_id: userId,
    created_at: now,
    expires_at: now + SESSION_MAX_AGE_MS,
  });
  return { token, maxAgeSeconds: SESSION_MAX_AGE_MS / 1000 };
}

/** The owner account to create: the web app's setup form, or OWNER_EMAIL and OWNER_PASSWORD. */
interface OwnerInput {
  password: string;
  email?: string;
  displayName?: string;
}

export function createAuthService({
  db,
  clock,
  passwords,
  passwordLogin,
  singleSignOn,
}: {
  db: Db;
  clock: Clock;
  passwords: PasswordHasher;
  /** PASSWORD_LOGIN: false leaves only the owner's recovery sign-in (no email) to passwords. */
  passwordLogin: boolean;
  /** What the sign-in screen offers besides passwords: null without single sign-on. */
  singleSignOn: { status(): { displayName: string; available: boolean } } | null;
}) {
  /** Creates the owner account once (D-AUTH-1); afterwards 400. */
  async function createOwner(input: OwnerInput) {
    if (await users.hasOwner(db)) throw errors.setupCompleted();
    const passwordHash = await passwords.hash(input.password);
    // Alone: setup happens once; group commit is for the frequent note writes (decision 0025).
    return transaction(
      db,
      async (trx) => {
        // Checked again inside the transaction: two racing setups must not both succeed.
        if (await users.hasOwner(trx)) throw errors.setupCompleted();
        return users.insertUser(trx, {
          email: input.email?.trim() ?? '',
          display_name: input.displayName?.trim() || 'Owner',
          password_hash: passwordHash,
          is_owner: 1,
          created_at: clock.now(),
        });
      },
      { group: false },
    );
  }

  return {
    async status(actor: Actor | null) {
      const setupRequired = !(await users.hasOwner(db));
      const user = actor ? await users.findUserById(db, actor.userId) : undefined;
      return {
        setupRequired,
        authenticated: user !== undefined,
        user: user ? userProfile(user) : null,
        passwordLogin,
        singleSignOn: singleSignOn?.status() ?? null,
      };
    },

    /** Creates the owner account once (D-AUTH-1) and signs it in; afterwards 400. */
    async setup(input: OwnerInput): Promise<NewSession> {
      const owner = await createOwner(input);
      return startSession(db, clock, owner.id);
    },

    /** The owner account alone, without a session: OWNER_PASSWORD at the server's start. */
    createOwner,

    /**
     * Without email: the owner (D-AUTH-3). Unknown user and wrong password look the same, and so
     * does an account made by single sign-on, which has no password (an empty hash). With
     * PASSWORD_LOGIN=false only the owner's sign-in without email is left: the recovery path for
     * when the identity provider is down (docs/deploy.md#owner-recovery).
     */
    async login(input: { password: string; email?: string }): Promise<NewSession> {
      if (input.email && !passwordLogin) throw errors.passwordLoginDisabled();
      const user = input.email
        ? await users.findUserByEmail(db, input.email.trim())
        : await users.findOwner(db);
      const valid = await passwords.verify(
        input.password,
        user?.password_hash || (await passwords.dummyHash()),
      );
      if (!user || !valid) throw errors.invalidCredentials();
      if (passwords.isOutdated(user.password_hash)) {
        // Only over the hash just verified: a password changed meanwhile is never undone.
        await users.replacePasswordHash(
          db,
          user.id,
          user.password_hash,
          await passwords.hash(input.password),
        );
      }
      return startSession(db, clock, user.id);
    },

    /** The session behind a cookie value, renewed when more than half its life has passed. */
    async resolveSession(token: string): Promise<ResolvedSession | null> {
      const tokenHash = sha256Hex(token);
      const now = clock.now();
      const row = await store.findSessionUser(db, tokenHash, now);
      if (!row) return null;
      const resolved: ResolvedSession = { actor: sessionActor(row), tokenHash };
      if (row.expires_at - now < SESSION_MAX_AGE_MS / 2) {
        await store.extendSession(db, tokenHash, now + SESSION_MAX_AGE_MS);
        resolved.renewed = { token, maxAgeSeconds: SESSION_MAX_AGE_MS / 1000 };
      }
      return resolved;
    },

    /** Which of these sessions (by token hash) are still signed in: the live streams' check. */
    async activeSessions(tokenHashes: readonly string[]): Promise<Set<string>> {
      return store.activeSessions(db, tokenHashes, clock.now());
    },

    async logout(tokenHash: string): Promise<void> {
      await store.deleteSession(db, tokenHash);
    },

    /** Changes the password and ends every other session of the user (D-AUTH-4). */
    async changePassword(
      actor: Actor,
      currentTokenHash: string | null,
      input: { currentPassword: string; newPassword: string },
    ): Promise<void> {
      const user = await users.findUserById(db, actor.userId);
      if (!user || !(await passwords.verify(input.currentPassword, user.password_hash))) {
        throw errors.wrongPassword();
      }
      const passwordHash = await passwords.hash(input.newPassword);
      // Alone: a password change is rare; group commit is for the frequent note writes (decision 0025).
      await transaction(
        db,
        async (trx) => {
          await users.updateUser(trx, user.id, { password_hash: passwordHash });
          await store.deleteOtherSessions(trx, user.id, currentTokenHash);
        },
        { group: false },
      );
    },

    /**
     * The operator's way back in (`reset-password`): a new password for the user with this email
     * (the owner when `email` is undefined), and every session of theirs ends.
     */
    async resetPassword(email: string | undefined, newPassword: string) {
      const user = email === undefined ? await users.findOwner(db) : await users.findUserByEmail(db, email);
      if (!user) throw errors.userNotFound();
      const passwordHash = await passwords.hash(newPassword);
      // Alone: a password reset is a command run by hand, with no other writes to group with.
      await transaction(
        db,
        async (trx) => {
          await users.updateUser(trx, user.id, { password_hash: passwordHash });
          await store.deleteOtherSessions(trx, user.id, null);
        },
        { group: false },
      );
      return userProfile(user);
    },

    async deleteExpiredSessions(): Promise<void> {
      await store.deleteExpiredSessions(db, clock.now());
      await store.deleteExpiredPendingSignOns(db, clock.now());
    },
  };
}
