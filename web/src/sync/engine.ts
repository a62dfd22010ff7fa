import { newNoteId } from '../../../src/shared/noteIds.js';
import { SyncApi } from './api.js';
import { deleteLocalDatabase, type LocalDatabase, openLocalDatabase } from './database.js';
import { EngineEvents } from './events.js';
import { nextFrame } from './frames.js';
import { applyEdit, type Edit, localView, recoveredFields } from './outbox.js';
import { Puller } from './pull.js';
import { Pusher } from './push.js';
import { Recoveries } from './recovery.js';
import { LocalStore } from './store.js';
import { SyncLoop } from './syncLoop.js';
import { type TabMessage, Tabs } from './tabs.js';
import type {
  EngineEvent,
  EngineOptions,
  FieldsFromNote,
  LocalNote,
  NoteFields,
  SyncEngine,
  SyncStatus,
  Timers,
} from './types.js';

/** Notes read before the app first renders: more than a large screen's first cards. */
const FIRST_SCREEN = 100;

const asArray = (ids: string | string[]) => (Array.isArray(ids) ? ids : [ids]);

/** The update `from` works out for the note as it stands; null when there is no note or no change. */
function updateFrom(from: FieldsFromNote, note: LocalNote | undefined): Edit | null {
  const fields = note ? from(note) : null;
  return fields ? { kind: 'update', fields } : null;
}

/**
 * The engine the UI holds (SyncEngine): its notes and status, and the person's edits. The jobs
 * behind it each have their module: the notes on the device and their events (store.ts, events.ts),
 * the other tabs and the leader lock (tabs.ts), when and how to sync (syncLoop.ts), pushing
 * (push.ts), pulling (pull.ts), and the text of gone notes (recovery.ts).
 */
class LocalSyncEngine implements SyncEngine {
  loaded: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly ownerId: number;
  private readonly events = new EngineEvents();
  private readonly store: LocalStore;
  private readonly recoveries: Recoveries;
  private readonly loop: SyncLoop;

  constructor(
    readonly userId: string,
    private readonly db: LocalDatabase,
    private readonly api: SyncApi,
    private readonly tabs: Tabs,
    timers: Timers | null,
    private readonly now: () => number,
  ) {
    this.ownerId = Number(userId);
    this.store = new LocalStore(db, this.ownerId, this.events, tabs);
    this.recoveries = new Recoveries(this.ownerId, now);
    this.loop = new SyncLoop(
      api,
      new Pusher(api, this.store, this.recoveries),
      new Puller(api, this.store, this.recoveries, now),
      this.events,
      tabs,
      timers,
      now,
      () => this.closed,
    );
  }

  // ---- Reading ----

  notes(): ReadonlyMap<string, LocalNote> {
    return this.store.views;
  }

  status(): SyncStatus {
    return { phase: this.loop.phase, waiting: this.store.waiting(), lastSyncedAt: this.loop.lastSyncedAt };
  }

  subscribe(listener: (event: EngineEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  // ---- Local edits ----

  async create(fields: NoteFields & { id?: string }): Promise<LocalNote> {
    const { id = newNoteId(), ...rest } = fields;
    await this.edit([id], { kind: 'create', fields: rest });
    const note = this.store.views.get(id);
    if (!note) throw new Error(`note ${id} was not created`);
    return note;
  }

  update(ids: string | string[], fields: NoteFields | FieldsFromNote): Promise<void> {
    return this.edit(asArray(ids), typeof fields === 'function' ? fields : { kind: 'update', fields });
  }

  deleteForever(ids: string | string[]): Promise<void> {
    return this.edit(asArray(ids), { kind: 'delete' });
  }

  async saveText(id: string, fields: NoteFields, shown: LocalNote): Promise<string | undefined> {
    const timestamp = this.now();
    const copy = this.recoveries.copyOf(id);
    let target: string | undefined;
    await this.store.write(copy ? [id, copy] : [id], async (_tx, states, notices) => {
      target = [id, copy].find((each) => each && localView(states.get(each)!, this.ownerId));
      if (target) {
        if (Object.keys(fields).length === 0) return;
        const state = states.get(target)!;
        states.set(target, {
          ...state,
          entries: applyEdit(target, state, { kind: 'update', fields }, timestamp),
        });
      } else if (fields.title !== undefined || fields.content !== undefined) {
        target = this.recoveries.recover(id, { ...recoveredFields(shown), ...fields }, states, notices);
      }
    });
    this.loop.schedulePush();
    return target;
  }

  private async edit(ids: string[], edit: Edit | FieldsFromNote) {
    const timestamp = this.now();
    await this.store.write(ids, async (_tx, states) => {
      for (const id of ids) {
        const state = states.get(id)!;
        const change = typeof edit === 'function' ? updateFrom(edit, localView(state, this.ownerId)) : edit;
        // An update or delete of a note this device does not know changes nothing.
        if (!change || (change.kind !== 'create' && !state.server && state.entries.length === 0)) continue;
        states.set(id, { ...state, entries: applyEdit(id, state, change, timestamp) });
      }
    });
    this.loop.schedulePush();
  }

  /**
   * The first screen's notes; the rest in the background once it is painted (reading 10,000
   * notes holds the main thread for a while): syncing, editing and the other tabs do not wait.
   */
  async load(window: EngineOptions['window']) {
    await this.store.loadFirstScreen(FIRST_SCREEN);
    this.loaded = nextFrame(window).then(() => this.store.reload('all'));
    this.loaded.catch((error) => console.error(error));
  }

  // ---- Tabs and sync ----

  start(options: EngineOptions, lockName: string) {
    this.tabs.listen((message) => this.onMessage(message));
    this.loop.watch(options.document, options.window);
    this.tabs.lead(
      options.locks,
      lockName,
      () => this.loop.lead(options.document),
      () => this.closed,
    );
  }

  private onMessage(message: TabMessage) {
    if (this.closed) return;
    if (message.type === 'changed') {
      this.store.reload(message.ids).catch((error) => console.error(error));
      this.loop.schedulePush();
    } else if (message.type === 'status') this.loop.heard(message.phase, message.lastSyncedAt);
    else if (message.type === 'notice') {
      this.recoveries.heard(message.notice);
      this.events.emit({ notice: message.notice });
    } else if (message.type === 'presence') this.events.emit({ presence: message.presence });
    else this.loop.autoSync();
  }

  async announce(noteId: string, here: boolean): Promise<void> {
    if (this.closed) return;
    await this.api.presence(noteId, here).catch(() => undefined);
  }

  async syncNow(): Promise<void> {
    if (this.closed) return;
    return this.loop.syncNow();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.loop.stop();
    await this.loop.settled();
    this.tabs.resign();
    this.tabs.close();
    this.db.close();
  }

  /** Another tab deletes the database (sign-out): this tab can no longer sync or save. */
  lost() {
    this.closed = true;
    this.loop.stop();
    this.tabs.resign();
    this.loop.signedOut();
  }
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
    new Tabs(makeChannel?.(`keepsake-u${options.userId}`) ?? null),
    timers,
    options.now ?? Date.now,
  );
  const window = options.window === undefined ? (globalThis.window ?? null) : options.window;
  await engine.load(window);
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
