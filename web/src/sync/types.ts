/**
 * The sync engine's contract with the UI (web/src/sync/index.ts re-exports it) and the shapes of
 * the sync protocol it speaks (docs/sync.md). Pure types: no runtime code.
 */

/** The 12 colors of src/features/notes/schemas.ts NOTE_COLORS (Keep's 2023 names). */
export type NoteColor =
  | 'default'
  | 'coral'
  | 'peach'
  | 'sand'
  | 'mint'
  | 'sage'
  | 'fog'
  | 'storm'
  | 'dusk'
  | 'blossom'
  | 'clay'
  | 'chalk';

export interface ServerAttachment {
  id: string;
  noteId: string;
  filename: string;
  mimeType: string;
  size: number;
  thumbnailPath: string | null;
  /** Pixels as shown; null for an image the server stored before it measured them, absent in a
   * note this device stored before then. */
  width?: number | null;
  height?: number | null;
  createdAt: string;
}

/**
 * The signed-in user's own reminder on a note (docs/reminders.md). `nextAt` is the server's; a
 * reminder set on this device and not pulled yet has none.
 */
export interface NoteReminder {
  at: string;
  repeat: 'none' | 'daily' | 'weekly' | 'monthly' | 'yearly';
  timeZone: string;
  nextAt?: string | null;
}

/** The API's Note, as GET /api/sync returns it (src/features/notes/schemas.ts `Note`). */
export interface ServerNote {
  id: string;
  ownerId: number;
  title: string;
  content: string;
  color: NoteColor;
  pinned: boolean;
  archived: boolean;
  trashed: boolean;
  trashedAt: string | null;
  checklistMode: boolean;
  sortOrder: number;
  createdAt: string;
  updatedAt: string;
  /** Starts at 1 on the server; 0 for a note created on this device and not pulled yet. */
  version: number;
  tags: string[];
  attachments: ServerAttachment[];
  reminder: NoteReminder | null;
}

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
  /** 'rejected': the server refused a change as invalid; it stays on the device until edited. */
  kind: 'recoveredAsNewNote' | 'conflictCopy' | 'resynced' | 'rejected';
  noteId: string;
  message: string;
}

export interface EngineEvent {
  notes?: string[] | 'all';
  status?: true;
  notice?: SyncNotice;
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
  /** `id`: a uuid v4 made on the device (one is made when left out). */
  create(fields: NoteFields & { id?: string }): Promise<LocalNote>;
  /** Many ids = one bulk action. */
  update(ids: string | string[], fields: NoteFields): Promise<void>;
  deleteForever(ids: string | string[]): Promise<void>;
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

// ---- The protocol (docs/sync.md) ----

export interface SyncChange {
  noteId: string;
  operation: 'create' | 'update' | 'delete';
  timestamp: number;
  baseVersion?: number;
  data?: NoteFields;
}

export interface SyncResult {
  noteId: string;
  status: 'applied' | 'skipped';
  reason?: 'stale' | 'forbidden' | 'deleted';
  conflictCopyId?: string;
  version?: number;
  merged?: true;
}

export interface Tombstone {
  id: string;
  deletedAt: number;
}
