/**
 * Live hints (issue 28, decision 0033): which notes changed for a user, sent to that user's open
 * streams within a second of the COMMIT. Hints only: the data still moves through pull and
 * push, so a stream that is down costs latency, never data.
 *
 * A committed transaction's note changes (db/noteChanges.ts) go out on the bus (bus.ts) to every
 * process. Each process resolves a message against its own database, at once, for the users
 * that hold a stream on it: a changed note for whoever can see it now (owner, collaborators),
 * an ended access (deleted, unshared) only for a user who holds its tombstone. So an event never
 * names a note its user cannot see, nor could just before. Nobody listening: nothing is queried.
 *
 * Resume: every event of a process has an id `<process>.<sequence>`; each user keeps the last
 * RING_SIZE events of the last RING_MS (while they have a stream, and RING_MS after the last one
 * closed), and a stream opened with Last-Event-ID gets what followed it, or `resync` when that is
 * no longer known (another process, a restart, too old).
 */
import { randomBytes } from 'node:crypto';
import { type Actor, requireWriteScope } from '../../actor.js';
import type { NoteChanges } from '../../db/noteChanges.js';
import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { requireNoteAccess } from '../../model/noteAccess.js';
import { usersWithAccessTo } from '../../model/notes.js';
import { tombstonedAmong } from '../../model/tombstones.js';
import { displayNamesOf } from '../../model/users.js';
import type { PresenceEventData } from '../../shared/api/live.js';
import { emptyMessage, type HintBus, type HintMessage } from './bus.js';

/** At most this many events are kept per user for Last-Event-ID. */
const RING_SIZE = 256;
/** For at most this long (and kept this long after the user's last stream closed). */
const RING_MS = 5 * 60_000;
/** A comment at least this often keeps proxies from closing an idle stream (the contract: 25 s). */
const KEEP_ALIVE_MS = 20_000;
/** How often the credentials behind open streams are checked (revoked key, ended session). */
const CREDENTIAL_CHECK_MS = 2_000;
/** Note ids per event: a burst becomes several events of bounded size. */
const IDS_PER_EVENT = 256;
/** Changes committed within this long go out in one message. */
const PUBLISH_DELAY_MS = 5;

export type LiveEvent =
  | { type: 'notes'; id: string; ids: string[] }
  | { type: 'resync'; id: string }
  | ({ type: 'presence'; id: string } & PresenceEventData);

/** Where a stream's events go: the route frames them (Server-Sent Events). */
interface LiveSink {
  send(event: LiveEvent): void;
  keepAlive(): void;
  end(): void;
}

/** What signed the stream in: it ends when this does. */
export type Credential = { kind: 'session'; tokenHash: string } | { kind: 'key'; keyId: string };

interface LiveDeps {
  db: Db;
  bus: HintBus;
  log: Logger;
  maxStreamsPerUser: number;
  maxStreams: number;
  activeSessions(tokenHashes: readonly string[]): Promise<Set<string>>;
  existingKeys(keyIds: readonly string[]): Promise<Set<string>>;
}

interface Stream {
  credential: Credential;
  sink: LiveSink;
}

interface Recent {
  seq: number;
  at: number;
  ids: string[];
}

/** A user with streams on this process (or had, within RING_MS): their events and streams. */
interface Channel {
  streams: Set<Stream>;
  recent: Recent[];
  /** Every event after this sequence number is in `recent`. */
  completeAfter: number;
  /** When the last stream closed; null while one is open. */
  idleSince: number | null;
}

export function createLiveService(deps: LiveDeps) {
  const { db, bus, log } = deps;
  const processId = randomBytes(6).toString('base64url');
  let sequence = 0;
  let streamCount = 0;
  const channels = new Map<number, Channel>();
  let outgoing: NoteChanges | null = null;
  let incoming: HintMessage | null = null;
  let resolving = false;
  const timers: NodeJS.Timeout[] = [];

  const eventId = (seq: number) => `${processId}.${seq}`;

  /** The sequence number of an id this process handed out, or null. */
  function sequenceOf(lastEventId: string | undefined): number | null {
    if (!lastEventId) return null;
    const [process, seq] = lastEventId.split('.');
    const value = Number(seq);
    return process === processId && Number.isSafeInteger(value) && value >= 0 && value <= sequence
      ? value
      : null;
  }

  function forget(channel: Channel, now: number): void {
    while (
      channel.recent.length > 0 &&
      (channel.recent.length > RING_SIZE || channel.recent[0]!.at < now - RING_MS)
    ) {
      channel.completeAfter = channel.recent.shift()!.seq;
    }
  }

  function deliver(userId: number, ids: string[]): void {
    const channel = channels.get(userId);
    if (!channel) return;
    const now = Date.now();
    for (let start = 0; start < ids.length; start += IDS_PER_EVENT) {
      const recent = { seq: ++sequence, at: now, ids: ids.slice(start, start + IDS_PER_EVENT) };
      channel.recent.push(recent);
      const event: LiveEvent = { type: 'notes', id: eventId(recent.seq), ids: recent.ids };
      for (const stream of channel.streams) stream.sink.send(event);
    }
    forget(channel, now);
  }

  /**
   * Presence goes to the streams of the users who can see the note now, not to its announcer's
   * own. It is not kept for Last-Event-ID: who is here is told again by the announcers (web app).
   */
  async function resolvePresence(presence: HintMessage['presence']): Promise<void> {
    const relevant = presence.filter(([, from]) => [...channels.keys()].some((userId) => userId !== from));
    if (relevant.length === 0) return;
    const [access, names] = await Promise.all([
      usersWithAccessTo(db, [...new Set(relevant.map(([noteId]) => noteId))]),
      displayNamesOf(db, [...new Set(relevant.map(([, userId]) => userId))]),
    ]);
    for (const [noteId, from, here] of relevant) {
      const name = names.get(from);
      if (name === undefined) continue;
      for (const { noteId: seen, userId } of access) {
        const channel = seen === noteId && userId !== from ? channels.get(userId) : undefined;
        if (!channel) continue;
        const event: LiveEvent = {
          type: 'presence',
          id: eventId(++sequence),
          noteId,
          userId: from,
          name,
          here,
        };
        for (const stream of channel.streams) stream.sink.send(event);
      }
    }
  }

  /** Who of the users with a channel may hear of what `message` names (see the module comment). */
  async function resolve(message: HintMessage): Promise<Map<number, Set<string>>> {
    const heard = new Map<number, Set<string>>();
    const hear = (userId: number, noteId: string) => {
      if (!channels.has(userId)) return;
      const ids = heard.get(userId) ?? new Set<string>();
      heard.set(userId, ids.add(noteId));
    };
    const listening = (pairs: [string, number][]) =>
      pairs.filter(([, userId]) => channels.has(userId)).map(([noteId, userId]) => ({ noteId, userId }));
    // A note changed for one user alone reaches that user if they still see it.
    const personal = new Set(listening(message.personal).map(({ noteId, userId }) => `${noteId} ${userId}`));
    const changed = new Set(message.changed);
    const asked = [...new Set([...changed, ...[...personal].map((key) => key.split(' ')[0]!)])];
    for (const { noteId, userId } of await usersWithAccessTo(db, asked)) {
      if (changed.has(noteId) || personal.has(`${noteId} ${userId}`)) hear(userId, noteId);
    }
    for (const { noteId, userId } of await tombstonedAmong(db, listening(message.ended)))
      hear(userId, noteId);
    return heard;
  }

  /** Messages that arrive while one is resolved are merged and resolved together next. */
  async function receive(message: HintMessage): Promise<void> {
    if (channels.size === 0) return;
    incoming = incoming
      ? {
          changed: [...incoming.changed, ...message.changed],
          ended: [...incoming.ended, ...message.ended],
          personal: [...incoming.personal, ...message.personal],
          presence: [...incoming.presence, ...message.presence],
        }
      : message;
    if (resolving) return;
    resolving = true;
    try {
      while (incoming) {
        const next = incoming;
        incoming = null;
        try {
          for (const [userId, ids] of await resolve(next)) deliver(userId, [...ids]);
          await resolvePresence(next.presence);
        } catch (err) {
          // The database is unreachable: what was missed is unknown, so every stream pulls.
          log.warn({ err }, 'live hints: could not resolve a change; streams resync');
          resyncAll();
        }
      }
    } finally {
      resolving = false;
    }
  }

  /** Hints may have been lost: every stream is told to pull, and older ids no longer resume. */
  function resyncAll(): void {
    for (const channel of channels.values()) {
      channel.recent = [];
      const seq = ++sequence;
      channel.completeAfter = seq;
      for (const stream of channel.streams) stream.sink.send({ type: 'resync', id: eventId(seq) });
    }
  }

  function publishNow(): void {
    const changes = outgoing;
    outgoing = null;
    if (!changes) return;
    bus.publish({
      ...emptyMessage(),
      changed: [...changes.changed],
      ended: changes.ended.map(({ noteId, userId }) => [noteId, userId]),
      personal: changes.personal.map(({ noteId, userId }) => [noteId, userId]),
    });
  }

  function closeStream(userId: number, stream: Stream): void {
    const channel = channels.get(userId);
    if (!channel?.streams.delete(stream)) return;
    streamCount--;
    if (channel.streams.size === 0) channel.idleSince = Date.now();
  }

  async function checkCredentials(): Promise<void> {
    if (streamCount === 0) return;
    const sessions: string[] = [];
    const keys: string[] = [];
    for (const channel of channels.values()) {
      for (const { credential } of channel.streams) {
        if (credential.kind === 'session') sessions.push(credential.tokenHash);
        else keys.push(credential.keyId);
      }
    }
    const [activeSessions, existingKeys] = await Promise.all([
      deps.activeSessions(sessions),
      deps.existingKeys(keys),
    ]);
    for (const [userId, channel] of channels) {
      for (const stream of channel.streams) {
        const { credential } = stream;
        const valid =
          credential.kind === 'session'
            ? activeSessions.has(credential.tokenHash)
            : existingKeys.has(credential.keyId);
        if (!valid) {
          closeStream(userId, stream);
          stream.sink.end();
        }
      }
    }
  }

  function keepAliveAndSweep(): void {
    const now = Date.now();
    for (const [userId, channel] of channels) {
      for (const stream of channel.streams) stream.sink.keepAlive();
      forget(channel, now);
      if (channel.idleSince !== null && channel.idleSince < now - RING_MS) channels.delete(userId);
    }
  }

  return {
    /** Starts listening to the bus and the timers; the database's listener is `committed`. */
    async start(): Promise<void> {
      await bus.start((message) => void receive(message), resyncAll);
      const every = (ms: number, run: () => unknown) => {
        const timer = setInterval(run, ms);
        timer.unref();
        timers.push(timer);
      };
      every(KEEP_ALIVE_MS, keepAliveAndSweep);
      every(CREDENTIAL_CHECK_MS, () =>
        checkCredentials().catch((err) => log.warn({ err }, 'live hints: credential check failed')),
      );
    },

    /** A transaction committed these changes (db/noteChanges.ts): they go out shortly, batched. */
    committed(changes: NoteChanges): void {
      if (!outgoing) {
        outgoing = { changed: new Set(), ended: [], personal: [] };
        setTimeout(publishNow, PUBLISH_DELAY_MS);
      }
      for (const id of changes.changed) outgoing.changed.add(id);
      outgoing.ended.push(...changes.ended);
      outgoing.personal.push(...changes.personal);
    },

    /**
     * Opens a stream for `actor`: events the user missed since `lastEventId` first (or resync),
     * then every new one. 429 past the user's or the server's number of streams. Returns the
     * function to call when the client goes away.
     */
    open(actor: Actor, credential: Credential, lastEventId: string | undefined, sink: LiveSink): () => void {
      let channel = channels.get(actor.userId);
      if (
        streamCount >= deps.maxStreams ||
        (channel !== undefined && channel.streams.size >= deps.maxStreamsPerUser)
      ) {
        throw errors.rateLimited(Math.ceil(CREDENTIAL_CHECK_MS / 1000));
      }
      if (!channel) {
        channel = { streams: new Set(), recent: [], completeAfter: sequence, idleSince: null };
        channels.set(actor.userId, channel);
      }
      const stream: Stream = { credential, sink };
      channel.streams.add(stream);
      channel.idleSince = null;
      streamCount++;
      if (lastEventId !== undefined) {
        forget(channel, Date.now());
        const after = sequenceOf(lastEventId);
        if (after === null || after < channel.completeAfter) {
          sink.send({ type: 'resync', id: eventId(sequence) });
        } else {
          for (const recent of channel.recent) {
            if (recent.seq > after) sink.send({ type: 'notes', id: eventId(recent.seq), ids: recent.ids });
          }
        }
      }
      const userId = actor.userId;
      return () => closeStream(userId, stream);
    },

    /**
     * The actor opened (`here`) or closed a note they can see: its other users' streams are told
     * (`event: presence`), on every process. 404 for a note the actor cannot see; a read-only
     * key may not claim to be in a note (403, as for every POST).
     */
    async announce(actor: Actor, noteId: string, here: boolean): Promise<void> {
      requireWriteScope(actor);
      const { note } = await requireNoteAccess(db, actor, noteId, 'read');
      bus.publish({ ...emptyMessage(), presence: [[note.id, actor.userId, here]] });
    },

    /** Streams open on this process (the bench and tests read it). */
    openStreams(): number {
      return streamCount;
    },

    /** Ends every stream (the server is closing) and stops listening. */
    async close(): Promise<void> {
      for (const timer of timers) clearInterval(timer);
      publishNow();
      for (const [userId, channel] of channels) {
        for (const stream of channel.streams) {
          closeStream(userId, stream);
          stream.sink.end();
        }
      }
      await bus.close();
    },
  };
}
