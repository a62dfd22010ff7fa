/**
 * How a committed change reaches every server process's streams (issue 28, decision 0033): in
 * memory on SQLite (one process), PostgreSQL LISTEN/NOTIFY with DATABASE_URL, Redis pub/sub when
 * REDIS_URL is set too. A message carries only note ids and (note, user) pairs; each process
 * decides against its own database who may hear of them (service.ts), so a message from
 * elsewhere on a shared Redis names nothing to anyone here.
 */
import { sql } from 'kysely';
import type pg from 'pg';
import type { Db } from '../../db/types.js';
import type { Logger } from '../../logger.js';

/**
 * One message: notes that changed, [noteId, userId] pairs of access that ended, and of notes that
 * changed for that user alone (their reminder); and who opened or closed which note (presence).
 */
export interface HintMessage {
  changed: string[];
  ended: [noteId: string, userId: number][];
  personal: [noteId: string, userId: number][];
  presence: [noteId: string, userId: number, here: boolean][];
}

export const emptyMessage = (): HintMessage => ({ changed: [], ended: [], personal: [], presence: [] });

export interface HintBus {
  /** Sends to every process, this one included; never throws (a lost hint costs a pull later). */
  publish(message: HintMessage): void;
  /**
   * Starts delivering every process's messages to `deliver`; `lost` is called when messages may
   * have been missed (the connection to the bus came back), so that streams resync.
   */
  start(deliver: (message: HintMessage) => void, lost: () => void): Promise<void>;
  close(): Promise<void>;
}

export const CHANNEL = 'notes_live';
/** PostgreSQL refuses NOTIFY payloads of 8,000 bytes or more: larger messages go in parts. */
const MAX_PAYLOAD_BYTES = 7_000;
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 10_000;

/** Parts of `message` whose JSON stays under MAX_PAYLOAD_BYTES (ids are ASCII). */
function payloadsOf(message: HintMessage): string[] {
  const payloads: string[] = [];
  let part = emptyMessage();
  const EMPTY_SIZE = JSON.stringify(part).length;
  let size = EMPTY_SIZE;
  const flush = () => {
    if (size === EMPTY_SIZE) return;
    payloads.push(JSON.stringify(part));
    part = emptyMessage();
    size = EMPTY_SIZE;
  };
  for (const id of message.changed) {
    if (size + id.length + 3 > MAX_PAYLOAD_BYTES) flush();
    part.changed.push(id);
    size += id.length + 3;
  }
  for (const list of ['ended', 'personal', 'presence'] as const) {
    for (const tuple of message[list]) {
      const length = JSON.stringify(tuple).length + 1;
      if (size + length > MAX_PAYLOAD_BYTES) flush();
      (part[list] as unknown[]).push(tuple);
      size += length;
    }
  }
  flush();
  return payloads;
}

/** A message as received; anything else (another program on the channel) is ignored. */
function parseMessage(payload: string): HintMessage | null {
  try {
    const value = JSON.parse(payload) as HintMessage;
    // A process of the version before sends no `personal` nor `presence`.
    const personal = value.personal ?? [];
    const presence = value.presence ?? [];
    const pairs = (list: unknown) =>
      Array.isArray(list) &&
      list.every(
        (pair) => Array.isArray(pair) && typeof pair[0] === 'string' && Number.isSafeInteger(pair[1]),
      );
    const valid =
      Array.isArray(value.changed) &&
      value.changed.every((id) => typeof id === 'string') &&
      pairs(value.ended) &&
      pairs(personal) &&
      pairs(presence) &&
      presence.every((triple) => typeof triple[2] === 'boolean');
    return valid ? { changed: value.changed, ended: value.ended, personal, presence } : null;
  } catch {
    return null;
  }
}

/** SQLite: one process, so a message only has to reach this process's streams. */
export function memoryBus(): HintBus {
  let deliver: ((message: HintMessage) => void) | undefined;
  return {
    publish(message) {
      deliver?.(message);
    },
    async start(onMessage) {
      deliver = onMessage;
    },
    async close() {
      deliver = undefined;
    },
  };
}

/** Retries `connect` with a growing delay until it succeeds or `stopped()`. */
function reconnecting(connect: () => Promise<void>, stopped: () => boolean, log: Logger) {
  let delay = RECONNECT_MIN_MS;
  const attempt = async () => {
    if (stopped()) return;
    try {
      await connect();
      delay = RECONNECT_MIN_MS;
    } catch (err) {
      log.warn({ err }, 'live hints: the bus is unreachable; retrying');
      setTimeout(attempt, delay).unref();
      delay = Math.min(delay * 2, RECONNECT_MAX_MS);
    }
  };
  return attempt;
}

/**
 * PostgreSQL: NOTIFY through the pool (a statement like any other), LISTEN on a connection of its
 * own, opened again with backoff when it breaks.
 */
export function postgresBus(db: Db, url: string, log: Logger): HintBus {
  let client: pg.Client | undefined;
  let closed = false;
  let connectedBefore = false;
  return {
    publish(message) {
      for (const payload of payloadsOf(message)) {
        sql`SELECT pg_notify(${CHANNEL}, ${payload})`
          .execute(db)
          .catch((err) => log.warn({ err }, 'live hints: NOTIFY failed'));
      }
    },
    async start(deliver, lost) {
      const connect = async () => {
        // Imported here: the pg driver is loaded only on PostgreSQL (src/db/postgresShared.ts).
        const { default: driver } = await import('pg');
        const listener = new driver.Client({ connectionString: url });
        listener.on('error', () => {}); // 'end' follows and reconnects
        listener.on('notification', (notification) => {
          const message = notification.payload ? parseMessage(notification.payload) : null;
          if (message) deliver(message);
        });
        listener.on('end', () => {
          // Only an established listener reconnects; a failed attempt is retried by `reconnecting`.
          if (client !== listener) return;
          client = undefined;
          if (!closed) setTimeout(retry, RECONNECT_MIN_MS).unref();
        });
        try {
          await listener.connect();
          await listener.query(`LISTEN ${CHANNEL}`);
        } catch (error) {
          await listener.end().catch(() => {});
          throw error;
        }
        if (closed) {
          await listener.end();
          return;
        }
        client = listener;
        if (connectedBefore) lost();
        connectedBefore = true;
      };
      const retry = reconnecting(connect, () => closed, log);
      await connect();
    },
    async close() {
      closed = true;
      await client?.end().catch(() => {});
    },
  };
}

/**
 * Redis: PUBLISH on one connection, SUBSCRIBE on another; ioredis reconnects both. Start-up does
 * not wait for Redis (a server whose Redis is away still starts and answers, decision 0028): the
 * subscriber subscribes each time it becomes ready, and every ready after the first may have
 * missed messages.
 */
export async function redisBus(url: string, log: Logger): Promise<HintBus> {
  // Loaded only when configured, like the rate limits' store (decision 0017).
  const { Redis } = await import('ioredis');
  const publisher = new Redis(url, { maxRetriesPerRequest: 1 });
  const subscriber = new Redis(url, { autoResubscribe: false, enableOfflineQueue: false });
  for (const connection of [publisher, subscriber]) {
    connection.on('error', (err) => log.warn({ err }, 'live hints: Redis unreachable'));
  }
  const quit = (connection: typeof publisher) =>
    connection.status === 'ready' ? connection.quit() : Promise.resolve(connection.disconnect());
  return {
    publish(message) {
      for (const payload of payloadsOf(message)) {
        publisher.publish(CHANNEL, payload).catch((err) => log.warn({ err }, 'live hints: PUBLISH failed'));
      }
    },
    async start(deliver, lost) {
      let subscribedBefore = false;
      subscriber.on('message', (_channel, payload: string) => {
        const message = parseMessage(payload);
        if (message) deliver(message);
      });
      subscriber.on('ready', () => {
        subscriber.subscribe(CHANNEL).then(
          () => {
            if (subscribedBefore) lost();
            subscribedBefore = true;
          },
          (err) => log.warn({ err }, 'live hints: SUBSCRIBE failed'),
        );
      });
    },
    async close() {
      await Promise.allSettled([quit(publisher), quit(subscriber)]);
    },
  };
}
