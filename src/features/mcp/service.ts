import type { Actor } from '../../actor.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { requireNoteAccess } from '../../model/noteAccess.js';
import type { createLiveService } from '../live/service.js';
import * as store from './store.js';

const SESSION_IDLE_MS = 24 * 60 * 60 * 1000; // D-MCP-2
/** last_used_at is refreshed at most this often; the idle limit is a day, so a minute is nothing. */
const TOUCH_RESOLUTION_MS = 60_000;
const SESSION_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/**
 * Sessions a user keeps (over all their keys): opening one more ends the least recently used.
 * Clients rarely end theirs (DELETE), so refusing would lock an agent out for a day.
 */
export const MAX_SESSIONS_PER_USER = 32;
/** Note resources one session may subscribe to. */
const MAX_SUBSCRIPTIONS_PER_SESSION = 1_000;
/** How often the sessions behind open update streams are checked (ended, evicted, expired). */
const STREAM_CHECK_MS = 2_000;

export type SessionCheck = 'valid' | 'missing' | 'malformed' | 'unknown';

/** Where a session's resource updates go: the route frames them (Server-Sent Events). */
interface UpdateSink {
  updated(noteId: string): void;
  keepAlive(): void;
  end(): void;
}

interface McpSessionsDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  live: Pick<ReturnType<typeof createLiveService>, 'open'>;
}

/**
 * MCP sessions live in the database, bound to the API key that opened them, so they survive a
 * restart and work across server processes (D-MCP-2); so do their subscriptions to note
 * resources. A session's update stream (GET /api/mcp) lives in one process: it hears the live
 * hints of the key's user there (already limited to what the user can see, decision 0033) and
 * passes on those of the notes the session subscribed to (decision 0045).
 */
export function createMcpSessionsService({ db, clock, log, live }: McpSessionsDeps) {
  const isLive = (session: { last_used_at: number }, now: number) =>
    now - session.last_used_at < SESSION_IDLE_MS;
  /** The update streams open on this process, by session id: one per session. */
  const streams = new Map<string, { end(): void }>();
  let checker: NodeJS.Timeout | undefined;

  /** Ends the streams of sessions that ended; a stream keeps its session from going idle. */
  async function checkStreams(): Promise<void> {
    const ids = [...streams.keys()];
    const now = clock.now();
    const alive = await store.liveSessionsAmong(db, ids, now - SESSION_IDLE_MS);
    for (const id of ids) if (!alive.has(id)) streams.get(id)?.end();
    const stale = [...alive].filter(([, usedAt]) => now - usedAt >= TOUCH_RESOLUTION_MS).map(([id]) => id);
    await store.touchSessions(db, stale, now);
  }

  async function passOn(sessionId: string, noteIds: string[] | null, sink: UpdateSink): Promise<void> {
    try {
      for (const noteId of await store.subscribedAmong(db, sessionId, noteIds)) sink.updated(noteId);
    } catch (err) {
      // The database is away: the updates are lost, so the stream ends and the client reconnects.
      log.warn({ err }, 'MCP: could not resolve resource updates; the stream ends');
      sink.end();
    }
  }

  return {
    /** Opens `sessionId` for the actor's key; the user's least recently used beyond the limit end. */
    async open(actor: Actor, sessionId: string): Promise<void> {
      await store.insertSession(db, { id: sessionId, key_id: actor.keyId!, now: clock.now() });
      await store.deleteSessionsBeyond(db, actor.userId, MAX_SESSIONS_PER_USER, sessionId);
    },

    /** Whether `sessionId` names a live session of this actor's key; keeps it alive if so. */
    async check(actor: Actor, sessionId: string | undefined): Promise<SessionCheck> {
      if (sessionId === undefined || sessionId === '') return 'missing';
      if (!SESSION_ID_PATTERN.test(sessionId)) return 'malformed';
      const session = await store.findSession(db, sessionId);
      const now = clock.now();
      if (!session || session.key_id !== actor.keyId || !isLive(session, now)) return 'unknown';
      if (now - session.last_used_at >= TOUCH_RESOLUTION_MS) await store.touchSession(db, sessionId, now);
      return 'valid';
    },

    async end(sessionId: string): Promise<void> {
      await store.deleteSession(db, sessionId);
      streams.get(sessionId)?.end();
    },

    async deleteIdleSessions(): Promise<void> {
      await store.deleteIdleSessions(db, clock.now() - SESSION_IDLE_MS);
    },

    /**
     * Subscribes a (checked) session to a note the actor can see; returns the note's id as
     * stored. A note the actor cannot see is not found, as reading it would be.
     */
    async subscribe(actor: Actor, sessionId: string, noteId: string): Promise<string> {
      const { note } = await requireNoteAccess(db, actor, noteId, 'read');
      if ((await store.countSubscriptions(db, sessionId)) >= MAX_SUBSCRIPTIONS_PER_SESSION) {
        throw errors.validation(`A session may subscribe to at most ${MAX_SUBSCRIPTIONS_PER_SESSION} notes`);
      }
      await store.insertSubscription(db, sessionId, note.id);
      return note.id;
    },

    async unsubscribe(sessionId: string, noteId: string): Promise<void> {
      await store.deleteSubscription(db, sessionId, noteId.toLowerCase());
    },

    /**
     * Opens the update stream of a (checked) session: `sink.updated` for each subscribed note
     * that changes for the actor's user, or that they lost (deleted, unshared). A new stream of
     * the same session ends the previous one here. 429 past the user's or the server's number of
     * live streams (GET /api/events counts the same). Returns the function to call when the
     * client goes away.
     */
    listen(actor: Actor, sessionId: string, sink: UpdateSink): () => void {
      const closeLive = live.open(actor, { kind: 'key', keyId: actor.keyId! }, undefined, {
        send: (event) => {
          // Hints may have been lost (resync): every subscribed note may have changed.
          if (event.type === 'notes') void passOn(sessionId, event.ids, sink);
          else if (event.type === 'resync') void passOn(sessionId, null, sink);
        },
        keepAlive: () => sink.keepAlive(),
        end: () => sink.end(),
      });
      streams.get(sessionId)?.end();
      const stream = { end: () => sink.end() };
      streams.set(sessionId, stream);
      checker ??= setInterval(
        () => void checkStreams().catch((err) => log.warn({ err }, 'MCP: stream check failed')),
        STREAM_CHECK_MS,
      ).unref();
      return () => {
        closeLive();
        if (streams.get(sessionId) === stream) streams.delete(sessionId);
        if (streams.size === 0) {
          clearInterval(checker);
          checker = undefined;
        }
      };
    },
  };
}
