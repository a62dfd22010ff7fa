/**
 * The offline sync engine of the web app (issue 13; docs/webapp-sync.md): the one module the UI
 * imports. Framework-free; everything it touches outside (fetch, IndexedDB, Web Locks,
 * BroadcastChannel, document, window, timers) is injectable, so node tests run it.
 */
export { countUnsynced, keepOnlyUnsynced } from './database.js';
export { deleteLocalData, openSyncEngine } from './engine.js';
export type {
  EngineEvent,
  EngineOptions,
  LocalNote,
  NoteColor,
  NoteFields,
  NotePresence,
  NoteReminder,
  ServerAttachment,
  ServerNote,
  SyncEngine,
  SyncNotice,
  SyncStatus,
  Timers,
} from './types.js';
