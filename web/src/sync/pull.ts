import type { SyncApi } from './api.js';
import { carriesText, localView, type NoteState, pulled } from './outbox.js';
import type { Recoveries } from './recovery.js';
import type { LocalStore } from './store.js';

const RESYNCED = 'This device had not synced for a long time: its notes were reloaded from the server.';
const TRASHED_ELSEWHERE = 'This note was moved to Trash elsewhere. Your edits are kept in it.';

/** Pulling (docs/sync.md "Pull"): what changed on the server since the cursor, onto the device. */
export class Puller {
  constructor(
    private readonly api: SyncApi,
    private readonly store: LocalStore,
    private readonly recoveries: Recoveries,
    private readonly now: () => number,
  ) {}

  /**
   * Pull (docs/sync.md): notes, then deletions, cursor last, all in one transaction. `full`
   * (after 410): everything since 0 replaces the server copies; a copy not in it is gone.
   */
  async pull(full: boolean) {
    const cursor = full ? 0 : ((await this.store.db.get('meta', 'cursor')) ?? 0);
    const notes = await this.api.notes(cursor);
    const gone = full ? [] : (await this.api.deleted(cursor)).body.map((tombstone) => tombstone.id);
    if (full) {
      // Only the leader's sync loop writes server copies, so none can appear meanwhile.
      const kept = new Set(notes.body.map((note) => note.id));
      for (const id of await this.store.db.getAllKeys('notes')) if (!kept.has(id)) gone.push(id);
    }
    await this.store.write([...notes.body.map((note) => note.id), ...gone], async (tx, states, notices) => {
      const now = this.now();
      for (const note of notes.body) {
        const before = states.get(note.id)!;
        if (note.trashed && trashedElsewhere(before, this.store.ownerId))
          notices.push({ kind: 'trashedElsewhere', noteId: note.id, message: TRASHED_ELSEWHERE });
        states.set(note.id, pulled(before, note, now));
      }
      if (full) notices.push({ kind: 'resynced', noteId: '', message: RESYNCED });
      for (const id of gone) this.recoveries.forget(id, states, notices);
      await tx.objectStore('meta').put(notes.syncTime, 'cursor');
    });
  }
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
