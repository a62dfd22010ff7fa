/**
 * The sync engine's contract with the UI (web/src/sync/index.ts re-exports it) and the shapes of
 * the sync protocol it speaks (docs/sync.md). Pure types: no runtime code.
 */

import type { PresenceEventData } from '../../../src/shared/api/live.js';
import type { Attachment, Note } from '../../../src/shared/api/notes.js';
import type { Reminder } from '../../../src/shared/api/reminders.js';

export type { SyncChange, SyncResult, Tombstone } from '../../../src/shared/api/sync.js';
export type { NoteColor } from '../../../src/shared/colors.js';

/**
 * The API's Note, as GET /api/sync returns it. `version` starts at 1 on the server; it is 0 for
 * a note created on this device and not pulled yet.
 */
export interface ServerNote extends Omit<Note, 'reminder'> {
  reminder: NoteReminder | null;
}

/**
 * The signed-in user's own reminder on a note (docs/reminders.md). `nextAt` is the server's; a
 * reminder set on this device and not pulled yet has none.
 */
export type NoteReminder = Omit<Reminder, 'nextAt'> & { nextAt?: string | null };
export type ServerAttachment = Attachment;

/** The fields to change, worked out from the note as it stands when the write runs. */
export type FieldsFromNote = (note: LocalNote) => NoteFields | null;

/** What the UI shows: the server copy with this device's unacknowledged changes applied. */
export interface LocalNote extends ServerNote {
  pending: boolean;
}

export type NoteFields = Partial<
  Pick<
    ServerNote,
    | 'title'
    | 'content'
    | 'color'
    | 'pinned'
    | 'archived'
    | 'trashed'
    | 'checklistMode'
    | 'sortOrder'
    | 'reminder'
  >
>;

export interface SyncStatus {
  phase: 'syncing' | 'idle' | 'offline' | 'signedOut';
  /** Notes with changes the server has not acknowledged yet. */
  waiting: number;
  lastSyncedAt: number | null;
}

/** Something the person must be told (snackbar). */
export interface SyncNotice {
  /**
   * 'rejected': the server refused a change as invalid; it stays on the device until edited.
   * 'trashedElsewhere': a note with text typed here, not yet on the server, was moved to Trash
   * elsewhere; the text is kept in it (and synced), and Restore brings it back.
   */
  kind: 'recoveredAsNewNote' | 'conflictCopy' | 'resynced' | 'rejected' | 'trashedElsewhere';
  noteId: string;
  /** recoveredAsNewNote: the gone note whose text `noteId` now holds. */
  from?: string;
  message: string;
}

/** Someone else opened (`here`) or closed a note (the live stream's `event: presence`). */
export type NotePresence = PresenceEventData;

export interface EngineEvent {
  notes?: string[] | 'all';
  status?: true;
  notice?: SyncNotice;
  presence?: NotePresence;
}

export interface SyncEngine {
  readonly userId: string;
  /** Every bucket: active, archived, trashed. */
  notes(): ReadonlyMap<string, LocalNote>;
  /**
   * Settles when notes() holds every note on the device: the engine opens with the first
   * screen's notes (and every note with local changes) and reads the rest after, with an event.
   */
  readonly loaded: Promise<void>;
  status(): SyncStatus;
  /** Changes from this tab, other tabs and pulls. */
  subscribe(listener: (event: EngineEvent) => void): () => void;
  /** `id`: a UUID made on the device (a time-ordered one, newNoteId, when left out). */
  create(fields: NoteFields & { id?: string }): Promise<LocalNote>;
  /**
   * Many ids = one bulk action. `fields` may be worked out from the note as it stands when the
   * write runs (after every earlier write), so that quick edits in a row build on each other;
   * null changes nothing.
   */
  update(ids: string | string[], fields: NoteFields | FieldsFromNote): Promise<void>;
  deleteForever(ids: string | string[]): Promise<void>;
  /**
   * Tells the note's other users that this person opened (`here`) or closed it; false also when
   * the page goes away (sent so that it outlives the page). Fails quietly: presence is a nicety.
   */
  announce(noteId: string, here: boolean): Promise<void>;
  /**
   * The editor's typing into note `id` (`fields`, possibly none). Unlike update(), typed text is
   * never dropped: when the note is gone from the device (deleted elsewhere, no longer shared),
   * the fields go into the note its text was recovered into, or, when there is none and they
   * carry text, into a new note made from `shown` (what the editor shows) with them on top, with a
   * recoveredAsNewNote notice. Resolves to the note that holds the text now: `id`, its recovered
   * copy, or undefined when `id` is gone and nothing was to be saved.
   */
  saveText(id: string, fields: NoteFields, shown: LocalNote): Promise<string | undefined>;
  /** Pull, push, and pull again if something was pushed; the UI calls it after signing in again. */
  syncNow(): Promise<void>;
  /** Timers, lock, channel, database. */
  close(): Promise<void>;
}

/** The timer functions the engine uses; tests pass their own to run them by hand. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export type ChannelLike = Pick<BroadcastChannel, 'postMessage' | 'close' | 'addEventListener'>;

export interface EngineOptions {
  userId: string;
  /** '' in the browser (same origin). */
  baseUrl: string;
  fetch?: typeof fetch;
  indexedDB?: IDBFactory;
  /** null: no Web Locks (tests, insecure contexts): this tab syncs on its own. */
  locks?: Pick<LockManager, 'request'> | null;
  channel?: ((name: string) => ChannelLike) | null;
  /** Focus and visibility. */
  document?: Pick<Document, 'visibilityState' | 'addEventListener'> | null;
  /** online / offline / focus; its next frame (the notes after the first screen load after it). */
  window?: (Pick<Window, 'addEventListener'> & Partial<Pick<Window, 'requestAnimationFrame'>>) | null;
  /** null: no automatic syncing at all (tests call syncNow()). Default: the global timers. */
  timers?: Timers | null;
  /** The clock that stamps edits (Unix ms). Default: Date.now. */
  now?: () => number;
}
