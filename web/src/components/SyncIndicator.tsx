import { Cloud, CloudOff, RefreshCw } from 'lucide-preact';
import { syncStatus } from '../app/state.js';
import { syncText } from '../model/syncText.js';

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
