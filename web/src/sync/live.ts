import { type EventSourceMessage, EventSourceParserStream } from 'eventsource-parser/stream';
import type { NotePresence, Timers } from './types.js';

/**
 * The live hints of GET /api/events (issue 28, docs/sync.md "Live hints") for the leader tab:
 * one stream per browser, read with fetch (EventSource can neither back off as we choose nor
 * tell a refusal from a drop). A hint only says which notes changed; the engine pulls.
 *
 * Reconnects after a drop with exponential backoff and full jitter (so a restarted server is not
 * met by every browser at once) and `Last-Event-ID`, so the server replays what was missed.
 */

/** The first wait after a drop; doubled per failed attempt up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;
/**
 * A refusal that is not about load (401 signed out, 404 on an older server, 403 by a proxy) is
 * not coming back soon: its backoff starts at FIRST_REFUSED_RETRY_MS and grows to 5 minutes.
 */
const FIRST_REFUSED_RETRY_MS = 30_000;
const MAX_REFUSED_RETRY_MS = 5 * 60_000;
/** A stream held this long counts as a success: the next drop starts the backoff again. */
const HELD_MS = 30_000;

interface LiveHandlers {
  /** Notes changed for this user; 'all' (`event: resync`): hints were missed, pull from the cursor. */
  hint(ids: string[] | 'all'): void;
  /** Someone else opened or closed a note this user can see. */
  presence(presence: NotePresence): void;
  /** The stream opened (pull once: changes made while it was down were not hinted) or ended. */
  up(isUp: boolean): void;
}

export class LiveHints {
  private lastEventId: string | null = null;
  private failures = 0;
  private retryTimer: unknown = null;
  private connection: AbortController | null = null;
  private stopped = false;

  constructor(
    /** GET /api/events with these headers and signal (SyncApi.events). */
    private readonly open: (init: RequestInit) => Promise<Response>,
    private readonly timers: Timers,
    private readonly handlers: LiveHandlers,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  start() {
    if (!this.connection && !this.stopped) void this.connect();
  }

  /** Now, instead of after the backoff (back online, signed in again); nothing if connected. */
  retryNow() {
    if (this.connection || this.stopped) return;
    this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    void this.connect();
  }

  stop() {
    this.stopped = true;
    this.timers.clearTimeout(this.retryTimer);
    this.connection?.abort();
    this.connection = null;
  }

  private async connect() {
    const connection = new AbortController();
    this.connection = connection;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.lastEventId) headers['last-event-id'] = this.lastEventId;
    let refused = false;
    let opened = 0;
    try {
      const response = await this.open({ headers, signal: connection.signal });
      const type = response.headers.get('content-type') ?? '';
      if (!response.ok || !response.body || !type.startsWith('text/event-stream')) {
        // 429 (too many streams) is load: the usual backoff; anything else is not coming back soon.
        refused = response.status !== 429 && response.status < 500;
        // The session (or key) ended, here or elsewhere: a pull finds out at once and signs the
        // device out, rather than the 30 s fallback poll finding it.
        if (response.status === 401) this.handlers.hint('all');
        await response.body?.cancel().catch(() => undefined);
        return;
      }
      opened = this.now();
      this.handlers.up(true);
      const events = response.body
        .pipeThrough(new TextDecoderStream())
        .pipeThrough(new EventSourceParserStream());
      for await (const event of events as unknown as AsyncIterable<EventSourceMessage>) this.receive(event);
    } catch {
      // A drop, a network error or our own abort: the same way out.
    } finally {
      if (opened) this.handlers.up(false);
      if (this.connection === connection) this.connection = null;
      if (!this.stopped) this.scheduleRetry(refused, opened);
    }
  }

  private receive(event: EventSourceMessage) {
    if (event.id) this.lastEventId = event.id;
    if (event.event === 'resync') this.handlers.hint('all');
    else if (event.event === 'presence') this.handlers.presence(JSON.parse(event.data) as NotePresence);
    else if (event.event === 'notes') {
      const ids = (JSON.parse(event.data) as { ids?: unknown }).ids;
      if (Array.isArray(ids)) this.handlers.hint(ids.filter((id): id is string => typeof id === 'string'));
    }
  }

  private scheduleRetry(refused: boolean, opened: number) {
    if (opened && this.now() - opened >= HELD_MS) this.failures = 0;
    const [first, max] = refused
      ? [FIRST_REFUSED_RETRY_MS, MAX_REFUSED_RETRY_MS]
      : [FIRST_RETRY_MS, MAX_RETRY_MS];
    const ceiling = Math.min(max, first * 2 ** Math.min(this.failures, 20));
    this.failures++;
    // Full jitter: anywhere up to the ceiling, but not in a tight loop.
    const wait = Math.max(FIRST_RETRY_MS / 2, this.random() * ceiling);
    this.retryTimer = this.timers.setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, wait);
  }
}
