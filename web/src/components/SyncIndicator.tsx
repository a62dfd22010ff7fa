import { Cloud, CloudOff, RefreshCw } from 'lucide-preact';
import { syncStatus } from '../app/state.js';
import type { SyncStatus } from '../sync/index.js';

export function waitingText(count: number): string {
  return count === 1 ? '1 change waiting' : `${count} changes waiting`;
}

function syncText(status: SyncStatus): string {
  const waiting = waitingText(status.waiting);
  if (status.phase === 'signedOut') return `Signed out, ${waiting}`;
  if (status.phase === 'offline') return status.waiting > 0 ? `Offline, ${waiting}` : 'Offline';
  if (status.phase === 'syncing') return 'Syncing…';
  return status.waiting > 0 ? waiting : 'All saved';
}

/** Offline, syncing, all saved, or how many changes wait: a `status` region. */
export function SyncIndicator() {
  const status = syncStatus.value;
  const Icon = status.phase === 'syncing' ? RefreshCw : status.phase === 'idle' ? Cloud : CloudOff;
  return (
    <div class={`sync ${status.phase}`} role="status">
      <Icon size={18} aria-hidden="true" />
      <span>{syncText(status)}</span>
    </div>
  );
}
