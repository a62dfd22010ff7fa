/** What the top bar's sync indicator says (a `status` region), from the engine's status. */
import type { SyncStatus } from '../sync/index.js';

export function waitingText(count: number): string {
  return count === 1 ? '1 change waiting' : `${count} changes waiting`;
}

export function syncText(status: SyncStatus): string {
  const waiting = waitingText(status.waiting);
  if (status.phase === 'signedOut') return `Signed out, ${waiting}`;
  if (status.phase === 'offline') {
    // The engine cannot tell a cut network from a server that is down; the browser can.
    const offline = globalThis.navigator?.onLine === false ? 'Offline' : "Can't reach the server";
    return status.waiting > 0 ? `${offline}, ${waiting}` : offline;
  }
  if (status.phase === 'syncing') return 'Syncing…';
  return status.waiting > 0 ? waiting : 'All saved';
}
