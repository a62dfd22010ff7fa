import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import {
  type EngineEvent,
  type EngineOptions,
  openSyncEngine,
  type SyncEngine,
  type Timers,
} from '../web/src/sync/index.js';
import type { ChannelLike } from '../web/src/sync/types.js';
import type { TestClient } from './helpers/client.js';

/**
 * Simulated browser devices for the web app's sync engine (web/src/sync) against the real
 * server: each device has its own IndexedDB (fake-indexeddb; its `auto` import provides the
 * IDB classes idb checks against) and a fetch that sends the device's session cookie.
 */

/** A fetch that carries `client`'s cookies, like a browser tab of that session. */
export function fetchAs(client: TestClient): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('cookie', [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    return fetch(input, { ...init, headers });
  };
}

export interface Device {
  engine: SyncEngine;
  indexedDB: IDBFactory;
}

/**
 * Opens an engine for `client`'s user on a fresh device (or the given one's database). No timers,
 * locks, channel, document or window unless given: tests call syncNow().
 */
export async function openDevice(
  client: TestClient,
  userId: number | string,
  options: Partial<EngineOptions> = {},
): Promise<Device> {
  const indexedDB = options.indexedDB ?? new IDBFactory();
  const engine = await openSyncEngine({
    userId: String(userId),
    baseUrl: client.baseUrl,
    fetch: fetchAs(client),
    locks: null,
    channel: null,
    document: null,
    window: null,
    timers: null,
    ...options,
    indexedDB,
  });
  await engine.loaded;
  return { engine, indexedDB };
}

/** The user id of a signed-in client. */
export async function userIdOf(client: TestClient): Promise<number> {
  const me = await client.get('/api/users/me');
  if (me.status !== 200) throw new Error(`not signed in: ${me.status}`);
  return me.body.id;
}

/** Web Locks for the tabs of one simulated browser: one holder per name, the rest queue. */
export function fakeLocks(): Pick<LockManager, 'request'> {
  const tails = new Map<string, Promise<unknown>>();
  const request = (name: string, callback: (lock: Lock | null) => Promise<unknown> | unknown) => {
    const granted = (tails.get(name) ?? Promise.resolve()).then(() => callback({ name, mode: 'exclusive' }));
    tails.set(
      name,
      granted.catch(() => undefined),
    );
    return granted;
  };
  return { request } as Pick<LockManager, 'request'>;
}

/** BroadcastChannel for the tabs of one simulated browser: delivers a copy to every other member. */
export function channelHub(): (name: string) => ChannelLike {
  const members = new Set<{ name: string; listeners: ((event: MessageEvent) => void)[] }>();
  return (name) => {
    const member = { name, listeners: [] as ((event: MessageEvent) => void)[] };
    members.add(member);
    return {
      postMessage(message: unknown) {
        for (const other of members) {
          if (other === member || other.name !== name) continue;
          const data = structuredClone(message);
          setImmediate(() => {
            for (const listener of other.listeners) listener({ data } as MessageEvent);
          });
        }
      },
      close() {
        members.delete(member);
      },
      addEventListener(type: string, listener: (event: MessageEvent) => void) {
        if (type === 'message') member.listeners.push(listener);
      },
    } as ChannelLike;
  };
}

/** Timers the test runs by hand: `fire(ms)` runs the callbacks registered with that delay. */
export class ManualTimers implements Timers {
  private next = 1;
  readonly pending = new Map<number, { callback: () => void; ms: number; repeat: boolean }>();
  setTimeout(callback: () => void, ms: number) {
    this.pending.set(this.next, { callback, ms, repeat: false });
    return this.next++;
  }
  setInterval(callback: () => void, ms: number) {
    this.pending.set(this.next, { callback, ms, repeat: true });
    return this.next++;
  }
  clearTimeout(handle: unknown) {
    this.pending.delete(handle as number);
  }
  clearInterval(handle: unknown) {
    this.pending.delete(handle as number);
  }
  /** Runs every timer registered with `ms`; one-shot timers are gone after. Returns how many ran. */
  fire(ms: number): number {
    const due = [...this.pending].filter(([, timer]) => timer.ms === ms);
    for (const [handle, timer] of due) {
      if (!timer.repeat) this.pending.delete(handle);
      timer.callback();
    }
    return due.length;
  }
}

/** Resolves at the next event of `engine` that `matches`. */
export function nextEvent(
  engine: SyncEngine,
  matches: (event: EngineEvent) => boolean,
): Promise<EngineEvent> {
  return new Promise((resolve) => {
    const stop = engine.subscribe((event) => {
      if (!matches(event)) return;
      stop();
      resolve(event);
    });
  });
}

/**
 * Resolves when the sync that a timer or event just started has finished: the next end of a
 * 'syncing' phase (a sync started while another was finishing shows 'syncing' again first).
 */
export async function syncFinished(engine: SyncEngine): Promise<void> {
  if (engine.status().phase !== 'syncing') await nextEvent(engine, () => engine.status().phase === 'syncing');
  await nextEvent(engine, () => engine.status().phase !== 'syncing');
}

/** A fetch that records every request (method, path, JSON body) before passing it on. */
export function recordingFetch(
  inner: typeof fetch,
  before?: (request: RecordedRequest) => Promise<void> | void,
) {
  const requests: RecordedRequest[] = [];
  const recording: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const request: RecordedRequest = {
      method: init?.method ?? 'GET',
      path: url.pathname + url.search,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    requests.push(request);
    await before?.(request);
    return inner(input, init);
  };
  return { fetch: recording, requests, pushes: () => requests.filter((r) => r.method === 'POST') };
}

export interface RecordedRequest {
  method: string;
  path: string;
  body: any;
}
