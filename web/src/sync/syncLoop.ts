import { ResyncRequiredError, SignedOutError, type SyncApi, UnreachableError } from './api.js';
import type { EngineEvents } from './events.js';
import { LiveHints } from './live.js';
import type { Puller } from './pull.js';
import type { Pusher } from './push.js';
import type { Tabs } from './tabs.js';
import type { EngineOptions, SyncStatus, Timers } from './types.js';

/**
 * When to sync (issue 13; design brief §3.3): on a live hint (issue 28, live.ts), and only while
 * the live stream is down, every FALLBACK_PULL_MS.
 */
const FALLBACK_PULL_MS = 30_000;
const PUSH_AFTER_MS = 1_000;

/**
 * The sync of this tab: its phase (the leader's, heard from it in the other tabs), and in the
 * leader tab when to sync (edits, focus, the network, live hints, the fallback pull) and the
 * sync itself: pull, push, pull again if something was pushed, one sync at a time.
 */
export class SyncLoop {
  phase: SyncStatus['phase'] = 'idle';
  lastSyncedAt: number | null = null;
  private leader = false;
  private pushTimer: unknown;
  private pullTimer: unknown;
  private live: LiveHints | null = null;
  private pullWhileDown: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private runAgain = false;

  constructor(
    private readonly api: SyncApi,
    private readonly pusher: Pusher,
    private readonly puller: Puller,
    private readonly events: EngineEvents,
    private readonly tabs: Tabs,
    private readonly timers: Timers | null,
    private readonly now: () => number,
    private readonly closed: () => boolean,
  ) {}

  /** Syncs when the tab is shown or focused, or the network comes back. */
  watch(document: EngineOptions['document'], window: EngineOptions['window']) {
    document?.addEventListener('visibilitychange', () => {
      if (document?.visibilityState === 'visible') this.autoSync();
    });
    window?.addEventListener('focus', () => this.autoSync());
    window?.addEventListener('online', () => {
      this.live?.retryNow();
      this.autoSync();
    });
    window?.addEventListener('offline', () => this.setPhase('offline'));
  }

  /** This tab became the leader: it holds the live stream and syncs from now on. */
  lead(document: EngineOptions['document']) {
    if (this.closed()) return;
    this.leader = true;
    const timers = this.timers;
    if (!timers) return;
    this.pullWhileDown = () => {
      this.pullTimer = timers.setInterval(() => {
        if (document?.visibilityState !== 'hidden') this.autoSync();
      }, FALLBACK_PULL_MS);
    };
    this.pullWhileDown();
    this.live = new LiveHints((init) => this.api.events(init), timers, {
      hint: () => this.autoSync(),
      presence: (presence) => {
        this.events.emit({ presence });
        this.tabs.post({ type: 'presence', presence });
      },
      up: (isUp) => this.liveChanged(isUp),
    });
    this.live.start();
    this.autoSync();
  }

  /**
   * The live stream opened: hints replace the fallback pull, and one pull catches up with what
   * changed while it was down. It ended: the fallback pull again until it reopens.
   */
  private liveChanged(isUp: boolean) {
    if (this.closed()) return;
    this.timers?.clearInterval(this.pullTimer);
    if (isUp) this.autoSync();
    else this.pullWhileDown?.();
  }

  /** The leader tab's status, as it told the other tabs. */
  heard(phase: SyncStatus['phase'], lastSyncedAt: number | null) {
    this.phase = phase;
    this.lastSyncedAt = lastSyncedAt;
    this.events.emit({ status: true });
  }

  private setPhase(phase: SyncStatus['phase']) {
    if (this.phase === phase) return;
    // The server answers again, or the person signed in again: the stream need not wait its backoff.
    if (phase === 'idle' && (this.phase === 'offline' || this.phase === 'signedOut')) this.live?.retryNow();
    this.phase = phase;
    this.events.emit({ status: true });
    this.tabs.post({ type: 'status', phase, lastSyncedAt: this.lastSyncedAt });
  }

  /** Push ~1 s after the last edit (of any tab): the leader's job. */
  schedulePush() {
    if (!this.leader || !this.timers || this.closed()) return;
    this.timers.clearTimeout(this.pushTimer);
    this.pushTimer = this.timers.setTimeout(() => this.autoSync(), PUSH_AFTER_MS);
  }

  /** A sync nobody awaits: a signed-out device waits for syncNow() after the next sign-in. */
  autoSync() {
    if (!this.leader || this.closed() || this.phase === 'signedOut') return;
    this.runSync().catch((error) => console.error(error));
  }

  /** A tab that does not lead asks the leader. */
  async syncNow(): Promise<void> {
    if (!this.leader) return this.tabs.post({ type: 'sync' });
    return this.runSync();
  }

  /** One sync at a time; a request during a sync runs one more after it. */
  private runSync(): Promise<void> {
    if (this.running) {
      this.runAgain = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        for (;;) {
          this.runAgain = false;
          await this.syncOnce();
          // Checked and cleared in one step: a request arriving between the two would be lost.
          if (!this.runAgain || this.closed() || this.phase !== 'idle') return;
        }
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  private async syncOnce() {
    this.setPhase('syncing');
    try {
      try {
        await this.puller.pull(false);
      } catch (error) {
        if (!(error instanceof ResyncRequiredError)) throw error;
        // docs/sync.md "Deletions and the 90-day limit": push, then replace everything.
        await this.pusher.pushAll();
        await this.puller.pull(true);
      }
      if (await this.pusher.pushAll()) await this.puller.pull(false);
      this.lastSyncedAt = this.now();
      this.setPhase('idle');
    } catch (error) {
      if (error instanceof SignedOutError) return this.setPhase('signedOut');
      if (error instanceof UnreachableError) return this.setPhase('offline');
      this.setPhase('idle');
      throw error;
    }
  }

  /** No more syncing: the tab closes, or another tab deleted the database. */
  stop() {
    this.timers?.clearTimeout(this.pushTimer);
    this.timers?.clearInterval(this.pullTimer);
    this.live?.stop();
  }

  /** Settles when the sync under way (if any) ends, however it ends. */
  async settled() {
    await this.running?.catch(() => undefined);
  }

  /** Another tab signed out (deleted the database). */
  signedOut() {
    this.phase = 'signedOut';
    this.events.emit({ status: true });
  }
}
