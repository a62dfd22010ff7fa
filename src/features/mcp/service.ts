import type { Actor } from '../../actor.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/types.js';
import * as store from './store.js';

export const SESSION_IDLE_MS = 24 * 60 * 60 * 1000; // D-MCP-2
/** last_used_at is refreshed at most this often; the idle limit is a day, so a minute is nothing. */
const TOUCH_RESOLUTION_MS = 60_000;
const SESSION_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type SessionCheck = 'valid' | 'missing' | 'malformed' | 'unknown';

/**
 * MCP sessions live in the database, bound to the API key that opened them, so they survive a
 * restart and work across server processes (D-MCP-2).
 */
export function createMcpSessionsService({ db, clock }: { db: Db; clock: Clock }) {
  const live = (session: { last_used_at: number }, now: number) =>
    now - session.last_used_at < SESSION_IDLE_MS;

  return {
    async open(actor: Actor, sessionId: string): Promise<void> {
      await store.insertSession(db, { id: sessionId, key_id: actor.keyId!, now: clock.now() });
    },

    /** Whether `sessionId` names a live session of this actor's key; keeps it alive if so. */
    async check(actor: Actor, sessionId: string | undefined): Promise<SessionCheck> {
      if (sessionId === undefined || sessionId === '') return 'missing';
      if (!SESSION_ID_PATTERN.test(sessionId)) return 'malformed';
      const session = await store.findSession(db, sessionId);
      const now = clock.now();
      if (!session || session.key_id !== actor.keyId || !live(session, now)) return 'unknown';
      if (now - session.last_used_at >= TOUCH_RESOLUTION_MS) await store.touchSession(db, sessionId, now);
      return 'valid';
    },

    async end(sessionId: string): Promise<void> {
      await store.deleteSession(db, sessionId);
    },

    async deleteIdleSessions(): Promise<void> {
      await store.deleteIdleSessions(db, clock.now() - SESSION_IDLE_MS);
    },
  };
}

export type McpSessionsService = ReturnType<typeof createMcpSessionsService>;
