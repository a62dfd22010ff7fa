import type { ChannelLike, EngineOptions, NotePresence, SyncNotice, SyncStatus } from './types.js';

/** Between the tabs of one user (BroadcastChannel `keepsake-u<id>`). */
export type TabMessage =
  | { type: 'changed'; ids: string[] | 'all' }
  | { type: 'status'; phase: SyncStatus['phase']; lastSyncedAt: number | null }
  | { type: 'notice'; notice: SyncNotice }
  | { type: 'presence'; presence: NotePresence }
  | { type: 'sync' };

/**
 * The other tabs of this browser profile: the channel that tells them what this tab did (and
 * hears what they did), and the Web Lock that elects the one tab that syncs, the leader.
 */
export class Tabs {
  private releaseLock: (() => void) | undefined;

  constructor(private readonly channel: ChannelLike | null) {}

  post(message: TabMessage) {
    this.channel?.postMessage(message);
  }

  listen(onMessage: (message: TabMessage) => void) {
    this.channel?.addEventListener('message', (event) => onMessage((event as MessageEvent<TabMessage>).data));
  }

  /**
   * Calls `becomeLeader` once this tab holds the lock `lockName`, at once without Web Locks
   * (every tab syncs). Held for the tab's life: when the leader closes, the next tab in line
   * takes over.
   */
  lead(locks: EngineOptions['locks'], lockName: string, becomeLeader: () => void, closed: () => boolean) {
    if (!locks) return becomeLeader();
    locks
      .request(lockName, () => {
        becomeLeader();
        return new Promise<void>((resolve) => {
          this.releaseLock = resolve;
          if (closed()) resolve();
        });
      })
      .catch((error) => console.error(error));
  }

  /** Lets the next tab in line lead. */
  resign() {
    this.releaseLock?.();
  }

  close() {
    this.channel?.close();
  }
}
