import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { type EngineOptions, openSyncEngine, type SyncEngine } from '../web/src/sync/index.js';
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
  return { engine, indexedDB };
}

/** The user id of a signed-in client. */
export async function userIdOf(client: TestClient): Promise<number> {
  const me = await client.get('/api/users/me');
  if (me.status !== 200) throw new Error(`not signed in: ${me.status}`);
  return me.body.id;
}
