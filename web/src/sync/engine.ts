import type { IDBPTransaction } from 'idb';
import { MAX_SYNC_CHANGES } from '../../../src/shared/api/limits.js';
import {
  RejectedChangesError,
  ResyncRequiredError,
  SignedOutError,
  SyncApi,
  UnreachableError,
} from './api.js';
import {
  deleteLocalDatabase,
  fromStored,
  type LocalDatabase,
  type LocalSchema,
  openLocalDatabase,
  type ReadWrite,
  writeNoteState,
  writeTransaction,
} from './database.js';
import { nextFrame } from './frames.js';
import { LiveHints } from './live.js';
import {
  acknowledge,
  acknowledgedCopy,
  applyEdit,
  carriesText,
  changesOf,
  type Edit,
  localView,
  type NoteState,
  type OutboxEntry,
  type OutgoingChange,
  pulled,
  recoveredFields,
} from './outbox.js';
import type {
  ChannelLike,
  EngineEvent,
  EngineOptions,
  LocalNote,
  NoteFields,
  NotePresence,
  ServerNote,
  SyncEngine,
  SyncNotice,
  SyncResult,
  SyncStatus,
  Timers,
} from './types.js';

/**
 * When to sync (issue 13; design brief §3.3): on a live hint (issue 28, live.ts), and only while
 * the live stream is down, every FALLBACK_PULL_MS.
 */
const FALLBACK_PULL_MS = 30_000;
const PUSH_AFTER_MS = 1_000;

/** Between the tabs of one user (BroadcastChannel `keepsake-u<id>`). */
type TabMessage =
  | { type: 'changed'; ids: string[] | 'all' }
  | { type: 'status'; phase: SyncStatus['phase']; lastSyncedAt: number | null }
  | { type: 'notice'; notice: SyncNotice }
  | { type: 'presence'; presence: NotePresence }
  | { type: 'sync' };

const EMPTY: NoteState = { entries: [] };

const MESSAGES = {
  recovered:
    'Your edits were saved as a new note: the original was deleted elsewhere or is no longer shared with you.',
  conflictCopy: 'This note was also changed elsewhere: the other version was kept as a copy.',
  resynced: 'This device had not synced for a long time: its notes were reloaded from the server.',
  trashedElsewhere: 'This note was moved to Trash elsewhere. Your edits are kept in it.',
  rejected: 'The server refused a change to this note; it stays on this device until you edit the note',
};

/** A uuid v4 from crypto.getRandomValues, which (unlike randomUUID) exists on plain http too. */
function uuidV4(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Notes read before the app first renders: more than a large screen's first cards. */
const FIRST_SCREEN = 100;

const asArray = (ids: string | string[]) => (Array.isArray(ids) ? ids : [ids]);

/** What a transaction over several notes did, for the tab's memory and the other tabs. */
interface Written {
  states: Map<string, NoteState>;
  notices: SyncNotice[];
}

class LocalSyncEngine implements SyncEngine {
  private readonly states = new Map<string, NoteState>();
  private readonly views = new Map<string, LocalNote>();
  private readonly listeners = new Set<(event: EngineEvent) => void>();
  private phase: SyncStatus['phase'] = 'idle';
  private lastSyncedAt: number | null = null;
  private leader = false;
  private closed = false;
  private releaseLock: (() => void) | undefined;
  private pushTimer: unknown;
  private pullTimer: unknown;
  private live: LiveHints | null = null;
  private pullWhileDown: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private runAgain = false;
  loaded: Promise<void> = Promise.resolve();
  private readonly ownerId: number;
  /**
   * Gone notes (deleted elsewhere, no longer shared) → the note their typed text was recovered
   * into, from this tab's syncs and the other tabs' notices: typing that arrives after the note
   * went (the editor's last keystrokes) follows it there. One entry per recovery, which only
   * text typed on this device makes.
   */
  private readonly recoveredInto = new Map<string, string>();

  constructor(
    readonly userId: string,
    private readonly db: LocalDatabase,
    private readonly api: SyncApi,
    private readonly channel: ChannelLike | null,
    private readonly timers: Timers | null,
    private readonly now: () => number,
  ) {
    this.ownerId = Number(userId);
  }

  // ---- Reading ----

  notes(): ReadonlyMap<string, LocalNote> {
    return this.views;
  }

  status(): SyncStatus {
    let waiting = 0;
    for (const state of this.states.values()) if (state.entries.length > 0) waiting++;
    return { phase: this.phase, waiting, lastSyncedAt: this.lastSyncedAt };
  }

  subscribe(listener: (event: EngineEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: EngineEvent) {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        // One broken listener must not stop the others or the sync.
        console.error(error);
      }
    }
  }

  private post(message: TabMessage) {
    this.channel?.postMessage(message);
  }

  // ---- Local edits ----

  async create(fields: NoteFields & { id?: string }): Promise<LocalNote> {
    const { id = uuidV4(), ...rest } = fields;
    await this.edit([id], { kind: 'create', fields: rest });
    const note = this.views.get(id);
    if (!note) throw new Error(`note ${id} was not created`);
    return note;
  }

  update(ids: string | string[], fields: NoteFields): Promise<void> {
    return this.edit(asArray(ids), { kind: 'update', fields });
  }

  deleteForever(ids: string | string[]): Promise<void> {
    return this.edit(asArray(ids), { kind: 'delete' });
  }

  async saveText(id: string, fields: NoteFields, shown: LocalNote): Promise<string | undefined> {
    const timestamp = this.now();
    const copy = this.recoveredCopy(id);
    let target: string | undefined;
    const written = await this.transact(copy ? [id, copy] : [id], async (_tx, states, notices) => {
      target = [id, copy].find((each) => each && localView(states.get(each)!, this.ownerId));
      if (target) {
        if (Object.keys(fields).length === 0) return;
        const state = states.get(target)!;
        states.set(target, {
          ...state,
          entries: applyEdit(target, state, { kind: 'update', fields }, timestamp),
        });
      } else if (fields.title !== undefined || fields.content !== undefined) {
        this.recover(id, { ...recoveredFields(shown), ...fields }, states, notices);
        target = this.recoveredInto.get(id);
      }
    });
    this.publish(written);
    this.schedulePush();
    return target;
  }

  private async edit(ids: string[], edit: Edit) {
    const timestamp = this.now();
    const written = await this.transact(ids, async (_tx, states) => {
      for (const id of ids) {
        const state = states.get(id)!;
        // An update or delete of a note this device does not know changes nothing.
        if (edit.kind !== 'create' && !state.server && state.entries.length === 0) continue;
        states.set(id, { ...state, entries: applyEdit(id, state, edit, timestamp) });
      }
    });
    this.publish(written);
    this.schedulePush();
  }

  // ---- Storage ----

  /**
   * Runs `change` over the states of `ids` read in one IndexedDB transaction, writes every state
   * it changed or added, and applies the result to this tab's memory. Everything a sync step
   * does to the device is one transaction, so a closed tab leaves no half-applied pull or push.
   */
  private async transact(
    ids: Iterable<string>,
    change: (tx: ReadWrite, states: Map<string, NoteState>, notices: SyncNotice[]) => Promise<void>,
  ): Promise<Written> {
    const tx = writeTransaction(this.db);
    const before = await readStates(tx, ids);
    const states = new Map(before);
    const notices: SyncNotice[] = [];
    await change(tx, states, notices);
    const written = new Map<string, NoteState>();
    await Promise.all(
      [...states].map(async ([id, state]) => {
        const old = before.get(id) ?? EMPTY;
        if (state !== old) written.set(id, await writeNoteState(tx, id, old, state));
      }),
    );
    await tx.done;
    for (const [id, state] of written) this.remember(id, state);
    return { states: written, notices };
  }

  private remember(id: string, state: NoteState) {
    if (!state.server && state.entries.length === 0) this.states.delete(id);
    else this.states.set(id, state);
    const view = localView(state, this.ownerId);
    if (view) this.views.set(id, view);
    else this.views.delete(id);
  }

  /** Tells this tab's listeners and the other tabs what a transaction changed. */
  private publish({ states, notices }: Written) {
    const ids = [...states.keys()];
    if (ids.length > 0) {
      this.emit({ notes: ids, status: true });
      this.post({ type: 'changed', ids });
    }
    for (const notice of notices) {
      this.emit({ notice });
      this.post({ type: 'notice', notice });
    }
  }

  /**
   * Reads notes from the database into memory: all of them at start (after the first screen),
   * and those another tab changed. Transactions over the same stores run one after the other, so
   * a write that follows this read is remembered after it, never overwritten by it.
   */
  async reload(ids: string[] | 'all') {
    const tx = writeTransaction(this.db);
    const states = ids === 'all' ? await readAllStates(tx) : await readStates(tx, ids);
    await tx.done;
    if (ids === 'all') {
      this.states.clear();
      this.views.clear();
    }
    for (const id of ids === 'all' ? states.keys() : ids) this.remember(id, states.get(id) ?? EMPTY);
    this.emit({ notes: ids, status: true });
  }

  /**
   * The first `count` notes in display order (the database's display index) and every note with
   * local changes (the outbox is small): enough for the first screen of the notes view, in its
   * exact order, without reading 10,000 notes first.
   */
  async loadFirstScreen(count: number) {
    const tx = this.db.transaction(['notes', 'outbox', 'acks'], 'readonly');
    const [first, entries, acks] = await Promise.all([
      tx.objectStore('notes').index('display').getAllKeys(null, count),
      tx.objectStore('outbox').getAll(),
      tx.objectStore('acks').getAllKeys(),
    ]);
    const states = await readStates(tx, [...first, ...entries.map((entry) => entry.noteId), ...acks]);
    await tx.done;
    for (const [id, state] of states) this.remember(id, state);
    this.emit({ notes: [...states.keys()], status: true });
  }

  // ---- Tabs, timers and events ----

  start(options: EngineOptions, lockName: string) {
    this.channel?.addEventListener('message', (event) =>
      this.onMessage((event as MessageEvent<TabMessage>).data),
    );
    options.document?.addEventListener('visibilitychange', () => {
      if (options.document?.visibilityState === 'visible') this.autoSync();
    });
    options.window?.addEventListener('focus', () => this.autoSync());
    options.window?.addEventListener('online', () => {
      this.live?.retryNow();
      this.autoSync();
    });
    options.window?.addEventListener('offline', () => this.setPhase('offline'));
    const becomeLeader = () => {
      if (this.closed) return;
      this.leader = true;
      const timers = this.timers;
      if (!timers) return;
      this.pullWhileDown = () => {
        this.pullTimer = timers.setInterval(() => {
          if (options.document?.visibilityState !== 'hidden') this.autoSync();
        }, FALLBACK_PULL_MS);
      };
      this.pullWhileDown();
      this.live = new LiveHints((init) => this.api.events(init), timers, {
        hint: () => this.autoSync(),
        presence: (presence) => {
          this.emit({ presence });
          this.post({ type: 'presence', presence });
        },
        up: (isUp) => this.liveChanged(isUp),
      });
      this.live.start();
      this.autoSync();
    };
    if (!options.locks) return becomeLeader();
    // Held for the tab's life: when the leader closes, the next tab in line takes over.
    options.locks
      .request(lockName, () => {
        becomeLeader();
        return new Promise<void>((resolve) => {
          this.releaseLock = resolve;
          if (this.closed) resolve();
        });
      })
      .catch((error) => console.error(error));
  }

  private onMessage(message: TabMessage) {
    if (this.closed) return;
    if (message.type === 'changed') {
      this.reload(message.ids).catch((error) => console.error(error));
      this.schedulePush();
    } else if (message.type === 'status') {
      this.phase = message.phase;
      this.lastSyncedAt = message.lastSyncedAt;
      this.emit({ status: true });
    } else if (message.type === 'notice') {
      const { notice } = message;
      if (notice.kind === 'recoveredAsNewNote' && notice.from)
        this.recoveredInto.set(notice.from, notice.noteId);
      this.emit({ notice });
    } else if (message.type === 'presence') this.emit({ presence: message.presence });
    else if (this.leader) this.autoSync();
  }

  /**
   * The live stream opened: hints replace the fallback pull, and one pull catches up with what
   * changed while it was down. It ended: the fallback pull again until it reopens.
   */
  private liveChanged(isUp: boolean) {
    if (this.closed) return;
    this.timers?.clearInterval(this.pullTimer);
    if (isUp) this.autoSync();
    else this.pullWhileDown?.();
  }

  private setPhase(phase: SyncStatus['phase']) {
    if (this.phase === phase) return;
    // The server answers again, or the person signed in again: the stream need not wait its backoff.
    if (phase === 'idle' && (this.phase === 'offline' || this.phase === 'signedOut')) this.live?.retryNow();
    this.phase = phase;
    this.emit({ status: true });
    this.post({ type: 'status', phase, lastSyncedAt: this.lastSyncedAt });
  }

  /** Push ~1 s after the last edit (of any tab): the leader's job. */
  private schedulePush() {
    if (!this.leader || !this.timers || this.closed) return;
    this.timers.clearTimeout(this.pushTimer);
    this.pushTimer = this.timers.setTimeout(() => this.autoSync(), PUSH_AFTER_MS);
  }

  /** A sync nobody awaits: a signed-out device waits for syncNow() after the next sign-in. */
  private autoSync() {
    if (!this.leader || this.closed || this.phase === 'signedOut') return;
    this.runSync().catch((error) => console.error(error));
  }

  async announce(noteId: string, here: boolean): Promise<void> {
    if (this.closed) return;
    await this.api.presence(noteId, here).catch(() => undefined);
  }

  // ---- Sync ----

  async syncNow(): Promise<void> {
    if (this.closed) return;
    if (!this.leader) return this.post({ type: 'sync' });
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
          if (!this.runAgain || this.closed || this.phase !== 'idle') return;
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
        await this.pull(false);
      } catch (error) {
        if (!(error instanceof ResyncRequiredError)) throw error;
        // docs/sync.md "Deletions and the 90-day limit": push, then replace everything.
        await this.pushAll();
        await this.pull(true);
      }
      if (await this.pushAll()) await this.pull(false);
      this.lastSyncedAt = this.now();
      this.setPhase('idle');
    } catch (error) {
      if (error instanceof SignedOutError) return this.setPhase('signedOut');
      if (error instanceof UnreachableError) return this.setPhase('offline');
      this.setPhase('idle');
      throw error;
    }
  }

  /**
   * Pull (docs/sync.md): notes, then deletions, cursor last, all in one transaction. `full`
   * (after 410): everything since 0 replaces the server copies; a copy not in it is gone.
   */
  private async pull(full: boolean) {
    const cursor = full ? 0 : ((await this.db.get('meta', 'cursor')) ?? 0);
    const notes = await this.api.notes(cursor);
    const gone = full ? [] : (await this.api.deleted(cursor)).body.map((tombstone) => tombstone.id);
    if (full) {
      // Only the leader's sync loop writes server copies, so none can appear meanwhile.
      const kept = new Set(notes.body.map((note) => note.id));
      for (const id of await this.db.getAllKeys('notes')) if (!kept.has(id)) gone.push(id);
    }
    const written = await this.transact(
      [...notes.body.map((note) => note.id), ...gone],
      async (tx, states, notices) => {
        const now = this.now();
        for (const note of notes.body) {
          const before = states.get(note.id)!;
          if (note.trashed && trashedElsewhere(before, this.ownerId))
            notices.push({ kind: 'trashedElsewhere', noteId: note.id, message: MESSAGES.trashedElsewhere });
          states.set(note.id, pulled(before, note, now));
        }
        if (full) notices.push({ kind: 'resynced', noteId: '', message: MESSAGES.resynced });
        for (const id of gone) this.forget(id, states, notices);
        await tx.objectStore('meta').put(notes.syncTime, 'cursor');
      },
    );
    this.publish(written);
  }

  /**
   * A note gone for this device (deleted, or no longer shared): its server copy and changes go,
   * but typed text never does (D-SYNC-8's spirit on the device): it becomes a new note, and the
   * person is told.
   */
  private forget(id: string, states: Map<string, NoteState>, notices: SyncNotice[]) {
    const state = states.get(id);
    if (!state || (!state.server && state.entries.length === 0)) return;
    const view = localView(state, this.ownerId);
    if (view && state.entries.some(carriesText)) this.recover(id, recoveredFields(view), states, notices);
    states.set(id, EMPTY);
  }

  /**
   * Typed text of the gone note `from` as a new note of this person's (`fields`), remembered as
   * where later typing for `from` goes (saveText), and announced.
   */
  private recover(from: string, fields: NoteFields, states: Map<string, NoteState>, notices: SyncNotice[]) {
    const copyId = uuidV4();
    states.set(copyId, { entries: applyEdit(copyId, EMPTY, { kind: 'create', fields }, this.now()) });
    this.recoveredInto.set(from, copyId);
    notices.push({ kind: 'recoveredAsNewNote', noteId: copyId, from, message: MESSAGES.recovered });
  }

  /** The note the typed text of `id` was last recovered into, if any (a copy may be recovered again). */
  private recoveredCopy(id: string): string | undefined {
    let copy = this.recoveredInto.get(id);
    while (copy && this.recoveredInto.has(copy)) copy = this.recoveredInto.get(copy);
    return copy;
  }

  /** Pushes the outbox in batches; whether anything was sent. */
  private async pushAll(): Promise<boolean> {
    let pushed = false;
    for (;;) {
      const batch = await this.takeBatch();
      if (batch.length === 0) return pushed;
      let results: SyncResult[];
      try {
        results = await this.api.push(batch.map((outgoing) => outgoing.change));
      } catch (error) {
        if (!(error instanceof RejectedChangesError)) throw error;
        await this.reject(batch, error.rejected);
        continue;
      }
      await this.acknowledgeBatch(batch, results);
      pushed = true;
    }
  }

  /**
   * The oldest changes, at most MAX_SYNC_CHANGES, marked inflight in the same transaction:
   * from then on they are resent unchanged until answered, and new edits start a new entry.
   */
  private async takeBatch(): Promise<OutgoingChange[]> {
    const tx = writeTransaction(this.db);
    const outbox = tx.objectStore('outbox');
    const batch: OutgoingChange[] = [];
    for (const entry of await outbox.getAll()) {
      if (entry.rejected) continue;
      const changes = changesOf(entry);
      if (batch.length + changes.length > MAX_SYNC_CHANGES) break;
      const sent = entry.inflight ? entry : { ...entry, inflight: true };
      if (sent !== entry) await outbox.put(sent);
      for (const change of changes) batch.push({ entry: sent, change });
    }
    await tx.done;
    return batch;
  }

  /**
   * A batch refused whole (D-SYNC-4) because of the changes `rejected` names: their entries are
   * set aside (kept, shown, not sent) and the person told; the rest goes again in the next batch.
   */
  private async reject(batch: OutgoingChange[], rejected: Map<number, string>) {
    const entries = new Map([...rejected].map(([index, reason]) => [batch[index]?.entry.seq, reason]));
    const written = await this.transact(
      batch.map(({ entry }) => entry.noteId),
      async (_tx, states, notices) => {
        for (const [id, state] of states) {
          if (!state.entries.some((entry) => entries.has(entry.seq))) continue;
          const marked = setAside(state.entries, entries);
          states.set(id, { ...state, entries: marked });
          const reason = marked.find((entry) => entry.rejected)?.rejected;
          notices.push({ kind: 'rejected', noteId: id, message: `${MESSAGES.rejected}: ${reason}` });
        }
      },
    );
    this.publish(written);
  }

  /** Applies the push answer: one result per change, in order (docs/sync.md "The answer"). */
  private async acknowledgeBatch(batch: OutgoingChange[], results: SyncResult[]) {
    const sent = new Set(batch.map(({ entry }) => entry.seq));
    const written = await this.transact(
      batch.map(({ entry }) => entry.noteId),
      async (_tx, states, notices) => {
        const gone = new Set<string>();
        /** Notes created by this batch → the version the server gave their last change. */
        const created = new Map<string, number>();
        for (const [index, { change }] of batch.entries()) {
          const result = results[index];
          if (!result || gone.has(change.noteId)) continue;
          if (result.status === 'applied' && result.version !== undefined) {
            if (change.operation === 'create' || created.has(change.noteId))
              created.set(change.noteId, result.version);
          }
          if (result.conflictCopyId && !notices.some((notice) => notice.noteId === result.conflictCopyId))
            notices.push({
              kind: 'conflictCopy',
              noteId: result.conflictCopyId,
              message: MESSAGES.conflictCopy,
            });
          if (result.status === 'skipped' && (result.reason === 'deleted' || result.reason === 'forbidden')) {
            gone.add(change.noteId);
            this.forget(change.noteId, states, notices);
            continue;
          }
          let state = acknowledge(states.get(change.noteId)!, change, result);
          if (change.operation === 'delete' && result.status === 'applied') state = EMPTY;
          states.set(change.noteId, state);
        }
        for (const [id, state] of states) {
          const entries = state.entries.filter((entry) => !sent.has(entry.seq));
          const version = created.get(id);
          if (!state.server && version !== undefined) {
            const acknowledged = state.entries.filter((entry) => sent.has(entry.seq));
            const server = acknowledgedCopy(acknowledged, this.ownerId, version);
            states.set(id, { ...state, entries, ...(server && { server }) });
          } else if (entries.length !== state.entries.length) states.set(id, { ...state, entries });
        }
      },
    );
    this.publish(written);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.timers?.clearTimeout(this.pushTimer);
    this.timers?.clearInterval(this.pullTimer);
    this.live?.stop();
    await this.running?.catch(() => undefined);
    this.releaseLock?.();
    this.channel?.close();
    this.db.close();
  }

  /** Another tab deletes the database (sign-out): this tab can no longer sync or save. */
  lost() {
    this.closed = true;
    this.timers?.clearTimeout(this.pushTimer);
    this.timers?.clearInterval(this.pullTimer);
    this.live?.stop();
    this.releaseLock?.();
    this.phase = 'signedOut';
    this.emit({ status: true });
  }
}

/**
 * Marks the refused entries (`reasons` by seq). A pending entry after a refused one is folded into
 * it (its newer fields on top): one pending entry per note, and nothing typed is dropped. A
 * delete replaces it.
 */
function setAside(entries: OutboxEntry[], reasons: Map<number | undefined, string>): OutboxEntry[] {
  const marked: OutboxEntry[] = [];
  for (const entry of entries) {
    const reason = reasons.get(entry.seq);
    const last = marked.at(-1);
    if (reason !== undefined) marked.push({ ...entry, inflight: false, rejected: reason });
    else if (last?.rejected && !entry.inflight && entry.operation !== 'delete')
      marked[marked.length - 1] = {
        ...entry,
        operation: last.operation,
        data: { ...last.data, ...entry.data },
        bases: { ...last.bases, ...entry.bases },
        mergedAt: { ...last.mergedAt, ...entry.mergedAt },
        rejected: last.rejected,
      };
    else if (last?.rejected && entry.operation === 'delete') marked[marked.length - 1] = entry;
    else marked.push(entry);
  }
  return marked;
}

/**
 * Whether a note with text typed here and not yet on the server is outside the Trash, on the
 * server as last pulled and on screen: a pulled copy in the Trash then means someone moved it
 * there elsewhere, and the person should know where their text went.
 */
function trashedElsewhere(state: NoteState, ownerId: number): boolean {
  return (
    state.server?.trashed === false &&
    state.entries.some(carriesText) &&
    localView(state, ownerId)?.trashed === false
  );
}

/** Reads the notes, outbox and acks stores: a transaction of either mode. */
type Reading = Pick<
  IDBPTransaction<LocalSchema, ('notes' | 'outbox' | 'acks')[], IDBTransactionMode>,
  'objectStore'
>;

/** The states of many notes: the outbox and acks are read whole (they are small), notes by id. */
async function readStates(tx: Reading, ids: Iterable<string>): Promise<Map<string, NoteState>> {
  const unique = [...new Set(ids)];
  const servers = await Promise.all(unique.map((id) => tx.objectStore('notes').get(id)));
  return statesOf(
    tx,
    unique.map((id, index) => [id, fromStored(servers[index])]),
  );
}

/** The state of every note on the device, the notes read in one request. */
async function readAllStates(tx: Reading): Promise<Map<string, NoteState>> {
  const servers = await tx.objectStore('notes').getAll();
  return statesOf(
    tx,
    servers.map((stored) => [stored.id, fromStored(stored)]),
    true,
  );
}

/**
 * The given server copies with their outbox entries (in seq order) and acknowledgements; with
 * `andOutbox`, also the notes that exist only in the outbox (created here, not pushed yet).
 */
async function statesOf(
  tx: Reading,
  servers: [string, ServerNote | undefined][],
  andOutbox = false,
): Promise<Map<string, NoteState>> {
  const [entries, acks] = await Promise.all([
    tx.objectStore('outbox').getAll(),
    tx.objectStore('acks').getAll(),
  ]);
  const states = new Map<string, NoteState>();
  for (const [id, server] of servers) states.set(id, { server, entries: [] });
  for (const entry of entries) {
    if (andOutbox && !states.has(entry.noteId)) states.set(entry.noteId, { entries: [] });
    states.get(entry.noteId)?.entries.push(entry);
  }
  for (const ack of acks) {
    const state = states.get(ack.noteId);
    if (state) state.acks = ack;
  }
  return states;
}

/** Opens the user's local database, loads it into memory, and starts syncing (leader tab). */
export async function openSyncEngine(options: EngineOptions): Promise<SyncEngine> {
  const factory = options.indexedDB ?? globalThis.indexedDB;
  const fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
  const makeChannel =
    options.channel === undefined
      ? typeof BroadcastChannel === 'undefined'
        ? null
        : (name: string) => new BroadcastChannel(name)
      : options.channel;
  const locks = options.locks === undefined ? (globalThis.navigator?.locks ?? null) : options.locks;
  const timers = options.timers === undefined ? defaultTimers : options.timers;
  let engine: LocalSyncEngine | undefined;
  const db = await openLocalDatabase(factory, options.userId, () => engine?.lost());
  engine = new LocalSyncEngine(
    options.userId,
    db,
    new SyncApi(options.baseUrl, fetcher),
    makeChannel?.(`keepsake-u${options.userId}`) ?? null,
    timers,
    options.now ?? Date.now,
  );
  await engine.loadFirstScreen(FIRST_SCREEN);
  const window = options.window === undefined ? (globalThis.window ?? null) : options.window;
  // The rest in the background once the first screen is painted (reading 10,000 notes holds the
  // main thread for a while); syncing, editing and the other tabs do not wait for it.
  engine.loaded = nextFrame(window).then(() => engine.reload('all'));
  engine.loaded.catch((error) => console.error(error));
  engine.start(
    {
      ...options,
      locks,
      document: options.document === undefined ? (globalThis.document ?? null) : options.document,
      window,
    },
    `keepsake-sync-u${options.userId}`,
  );
  return engine;
}

const defaultTimers: Timers = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
  setInterval: (callback, ms) => globalThis.setInterval(callback, ms),
  clearInterval: (handle) => globalThis.clearInterval(handle as ReturnType<typeof setInterval>),
};

/** Sign-out: removes the user's local database (the UI offers export first if anything waits). */
export function deleteLocalData(userId: string, indexedDB: IDBFactory = globalThis.indexedDB): Promise<void> {
  return deleteLocalDatabase(indexedDB, userId);
}
