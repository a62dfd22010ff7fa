import type { Db } from '../../db/types.js';

export async function insertSession(db: Db, session: { id: string; key_id: string; now: number }) {
  await db
    .insertInto('mcp_sessions')
    .values({ id: session.id, key_id: session.key_id, created_at: session.now, last_used_at: session.now })
    .execute();
}

export async function findSession(db: Db, sessionId: string) {
  return db.selectFrom('mcp_sessions').selectAll().where('id', '=', sessionId).executeTakeFirst();
}

export async function touchSession(db: Db, sessionId: string, now: number): Promise<void> {
  await db.updateTable('mcp_sessions').set({ last_used_at: now }).where('id', '=', sessionId).execute();
}

export async function deleteSession(db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('mcp_sessions').where('id', '=', sessionId).execute();
}

export async function deleteIdleSessions(db: Db, idleSince: number): Promise<void> {
  await db.deleteFrom('mcp_sessions').where('last_used_at', '<', idleSince).execute();
}

/**
 * Ends the sessions of `userId` (over all their keys) past the `keep` most recently used, never
 * `exceptId` (the one just opened), which the caller counts as one of them.
 */
export async function deleteSessionsBeyond(db: Db, userId: number, keep: number, exceptId: string) {
  const beyond = await db
    .selectFrom('mcp_sessions')
    .innerJoin('api_keys', 'api_keys.id', 'mcp_sessions.key_id')
    .select('mcp_sessions.id')
    .where('api_keys.user_id', '=', userId)
    .where('mcp_sessions.id', '!=', exceptId)
    .orderBy('mcp_sessions.last_used_at', 'desc')
    .orderBy('mcp_sessions.created_at', 'desc')
    .limit(1_000)
    .offset(keep - 1)
    .execute();
  if (beyond.length === 0) return;
  await db
    .deleteFrom('mcp_sessions')
    .where(
      'id',
      'in',
      beyond.map(({ id }) => id),
    )
    .execute();
}

/** Which of these sessions still exist and were used since `usedSince`, with when they were. */
export async function liveSessionsAmong(db: Db, sessionIds: readonly string[], usedSince: number) {
  if (sessionIds.length === 0) return new Map<string, number>();
  const rows = await db
    .selectFrom('mcp_sessions')
    .select(['id', 'last_used_at'])
    .where('id', 'in', sessionIds)
    .where('last_used_at', '>=', usedSince)
    .execute();
  return new Map(rows.map(({ id, last_used_at }) => [id, Number(last_used_at)]));
}

export async function touchSessions(db: Db, sessionIds: readonly string[], now: number) {
  if (sessionIds.length === 0) return;
  await db.updateTable('mcp_sessions').set({ last_used_at: now }).where('id', 'in', sessionIds).execute();
}

export async function countSubscriptions(db: Db, sessionId: string): Promise<number> {
  const row = await db
    .selectFrom('mcp_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('session_id', '=', sessionId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertSubscription(db: Db, sessionId: string, noteId: string): Promise<void> {
  await db
    .insertInto('mcp_subscriptions')
    .values({ session_id: sessionId, note_id: noteId })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function deleteSubscription(db: Db, sessionId: string, noteId: string): Promise<void> {
  await db
    .deleteFrom('mcp_subscriptions')
    .where('session_id', '=', sessionId)
    .where('note_id', '=', noteId)
    .execute();
}

/** The notes among `noteIds` (all of the session's when null) that the session subscribed to. */
export async function subscribedAmong(
  db: Db,
  sessionId: string,
  noteIds: readonly string[] | null,
): Promise<string[]> {
  if (noteIds?.length === 0) return [];
  let query = db.selectFrom('mcp_subscriptions').select('note_id').where('session_id', '=', sessionId);
  if (noteIds) query = query.where('note_id', 'in', noteIds);
  return (await query.execute()).map(({ note_id }) => note_id);
}
