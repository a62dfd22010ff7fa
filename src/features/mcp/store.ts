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
