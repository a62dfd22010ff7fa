import {
  type LocalDatabase,
  type ReadWrite,
  readAllStates,
  readStates,
  writeNoteState,
  writeTransaction,
} from './database.js';
import type { EngineEvents } from './events.js';
import { localView, type NoteState } from './outbox.js';
import type { Tabs } from './tabs.js';
import type { LocalNote, SyncNotice } from './types.js';

/** The state of a note the device does not hold (or no longer does). */
export const EMPTY: NoteState = { entries: [] };

/**
 * A change over the states of several notes, read in one transaction: it replaces or adds
 * states in `states` and pushes what the person must be told to `notices`.
 */
type StatesChange = (
  tx: ReadWrite,
  states: Map<string, NoteState>,
  notices: SyncNotice[],
) => Promise<void> | void;

/**
 * The notes on this device: this tab's memory of their states (server copy, outbox entries,
 * acknowledgements) and of what they look like, kept in step with the database, and every
 * change to them told to this tab's listeners and the other tabs.
 */
export class LocalStore {
  private readonly states = new Map<string, NoteState>();
  readonly views = new Map<string, LocalNote>();

  constructor(
    readonly db: LocalDatabase,
    readonly ownerId: number,
    private readonly events: EngineEvents,
    private readonly tabs: Tabs,
  ) {}

  /** Notes with changes the server has not acknowledged yet. */
  waiting(): number {
    let waiting = 0;
    for (const state of this.states.values()) if (state.entries.length > 0) waiting++;
    return waiting;
  }

  /**
   * Runs `change` over the states of `ids` read in one IndexedDB transaction, writes every state
   * it changed or added, applies the result to this tab's memory, and tells this tab's listeners
   * and the other tabs. Everything a sync step does to the device is one transaction, so a
   * closed tab leaves no half-applied pull or push.
   */
  async write(ids: Iterable<string>, change: StatesChange): Promise<void> {
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
    const changed = [...written.keys()];
    if (changed.length > 0) {
      this.events.emit({ notes: changed, status: true });
      this.tabs.post({ type: 'changed', ids: changed });
    }
    for (const notice of notices) {
      this.events.emit({ notice });
      this.tabs.post({ type: 'notice', notice });
    }
  }

  private remember(id: string, state: NoteState) {
    if (!state.server && state.entries.length === 0) this.states.delete(id);
    else this.states.set(id, state);
    const view = localView(state, this.ownerId);
    if (view) this.views.set(id, view);
    else this.views.delete(id);
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
    this.events.emit({ notes: ids, status: true });
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
    this.events.emit({ notes: [...states.keys()], status: true });
  }
}
