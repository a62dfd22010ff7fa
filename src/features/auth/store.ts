import type { Selectable } from 'kysely';
import { inJsonList } from '../../db/dialect.js';
import { fastStatement } from '../../db/fastPath.js';
import { keptWhileTablesUnchanged } from '../../db/keptReads.js';
import type { OidcLoginsTable } from '../../db/schema.js';
import type { Db } from '../../db/types.js';

export async function insertSession(
  db: Db,
  session: { token_hash: string; user_id: number; created_at: number; expires_at: number },
): Promise<void> {
  await db.insertInto('sessions').values(session).execute();
}

interface SessionUser {
  token_hash: string;
  expires_at: number;
  id: number;
  is_owner: number;
}

/**
 * Sessions' users as last read, until a session or user changes (db/keptReads.ts): the session
 * read was a tenth of a signed-in request's CPU (docs/decisions/0048-kept-credentials.md).
 */
const keptSessionUsers = keptWhileTablesUnchanged<SessionUser>({
  name: 'session_users',
  tables: ['sessions', 'users'],
  max: 10_000,
});

/** The session's user, while the session has not expired: the start of every signed-in request. */
export async function findSessionUser(
  db: Db,
  tokenHash: string,
  now: number,
): Promise<SessionUser | undefined> {
  const row = await keptSessionUsers(db, tokenHash, () =>
    sessionUserStatement.getOr(db, [tokenHash, now], () => findSessionUserWithKysely(db, tokenHash, now)),
  );
  // A kept row was read before now: the session may have expired since.
  return row && row.expires_at > now ? row : undefined;
}

export async function findSessionUserWithKysely(
  db: Db,
  tokenHash: string,
  now: number,
): Promise<SessionUser | undefined> {
  return db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.token_hash', 's.expires_at', 'u.id', 'u.is_owner'])
    .where('s.token_hash', '=', tokenHash)
    .where('s.expires_at', '>', now)
    .executeTakeFirst();
}

/** findSessionUser's SQLite fast path (db/fastPath.ts); test/fast-paths.test.ts pins it to the above. */
export const sessionUserStatement = fastStatement<[tokenHash: string, now: number], SessionUser>(
  `SELECT s.token_hash, s.expires_at, u.id, u.is_owner FROM sessions s
   JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.expires_at > ?`,
);

export async function extendSession(db: Db, tokenHash: string, expiresAt: number): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ expires_at: expiresAt })
    .where('token_hash', '=', tokenHash)
    .execute();
}

/** Which of these sessions are still signed in (not ended, not expired): the live streams' check. */
export async function activeSessions(
  db: Db,
  tokenHashes: readonly string[],
  now: number,
): Promise<Set<string>> {
  if (tokenHashes.length === 0) return new Set();
  const rows = await db
    .selectFrom('sessions')
    .select('token_hash')
    .where('token_hash', 'in', inJsonList(tokenHashes))
    .where('expires_at', '>', now)
    .execute();
  return new Set(rows.map((row) => row.token_hash));
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
}

export async function deleteOtherSessions(
  db: Db,
  userId: number,
  keepTokenHash: string | null,
): Promise<void> {
  let query = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (keepTokenHash) query = query.where('token_hash', '<>', keepTokenHash);
  await query.execute();
}

export async function deleteExpiredSessions(db: Db, now: number): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
}

type PendingSignOn = Selectable<OidcLoginsTable>;

export async function insertPendingSignOn(db: Db, signOn: PendingSignOn): Promise<void> {
  await db.insertInto('oidc_logins').values(signOn).execute();
}

/** The sign-on under way with this state, removed as it is read: a state works once. */
export async function takePendingSignOn(
  db: Db,
  stateHash: string,
  now: number,
): Promise<PendingSignOn | undefined> {
  const row = await db
    .deleteFrom('oidc_logins')
    .where('state_hash', '=', stateHash)
    .returningAll()
    .executeTakeFirst();
  return row && row.expires_at > now ? row : undefined;
}

export async function deleteExpiredPendingSignOns(db: Db, now: number): Promise<void> {
  await db.deleteFrom('oidc_logins').where('expires_at', '<=', now).execute();
}

/** The user that this provider account (issuer, subject) signs in as. */
export async function findLinkedUserId(db: Db, issuer: string, subject: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('user_identities')
    .select('user_id')
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst();
  return row?.user_id;
}

export async function linkIdentity(
  db: Db,
  identity: { issuer: string; subject: string; user_id: number; created_at: number },
): Promise<void> {
  await db.insertInto('user_identities').values(identity).execute();
}
