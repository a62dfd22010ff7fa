/**
 * The UI's state, as signals: what the sync engine holds (re-read on its events), where the
 * person is (route), and what is on screen (search, selection, editor, snackbar).
 */
import { batch, computed, effect, signal } from '@preact/signals';
import { allLabels } from '../model/labels.js';
import { compareNotes } from '../model/ordering.js';
import type { SearchFilters } from '../model/search.js';
import type { LocalNote, SyncEngine, SyncNotice, SyncStatus } from '../sync/index.js';

export const engine = signal<SyncEngine | null>(null);
/** Bumped on every engine event that touches notes: the computed views below re-read them. */
const notesRevision = signal(0);
export const syncStatus = signal<SyncStatus>({ phase: 'idle', waiting: 0, lastSyncedAt: null });

export function attachEngine(next: SyncEngine): () => void {
  // At once: the session's watch (session.ts) must not see the new engine with the old status.
  batch(() => {
    engine.value = next;
    syncStatus.value = next.status();
    notesRevision.value++;
  });
  return next.subscribe((event) => {
    if (event.notes) notesRevision.value++;
    if (event.status) syncStatus.value = next.status();
    if (event.notice) onNotice(next, event.notice);
  });
}

function onNotice(current: SyncEngine, notice: SyncNotice): void {
  if (notice.kind === 'recoveredAsNewNote' && notice.from) continueEditing(notice.from, notice.noteId);
  if (notice.kind === 'trashedElsewhere')
    showSnackbar(notice.message, () => void current.update(notice.noteId, { trashed: false }), 'Restore');
  else showSnackbar(notice.message);
}

/** Every note on the device, in display order. */
export const sortedNotes = computed<LocalNote[]>(() => {
  notesRevision.value;
  const current = engine.value;
  return current ? [...current.notes().values()].sort(compareNotes) : [];
});

export const labels = computed(() => allLabels(sortedNotes.value.filter((note) => !note.trashed)));

export function noteById(id: string): LocalNote | undefined {
  notesRevision.value;
  return engine.value?.notes().get(id);
}

// ---- Route ----

export type Route =
  | { view: 'notes' }
  | { view: 'archive' }
  | { view: 'trash' }
  | { view: 'reminders' }
  | { view: 'settings' }
  | { view: 'admin' }
  | { view: 'label'; label: string };

/** The views with a fixed path (labels have /label/<name>). */
const PAGES = ['/reminders', '/archive', '/trash', '/settings', '/admin'] as const;

function routeFromPath(pathname: string): Route {
  const page = PAGES.find((candidate) => candidate === pathname);
  if (page) return { view: page.slice(1) } as Route;
  const label = /^\/label\/(.+)$/.exec(pathname)?.[1];
  if (label) return { view: 'label', label: decodeURIComponent(label) };
  return { view: 'notes' };
}

export function pathOf(route: Route): string {
  if (route.view === 'label') return `/label/${encodeURIComponent(route.label)}`;
  return route.view === 'notes' ? '/' : `/${route.view}`;
}

export const route = signal<Route>(routeFromPath(location.pathname));

export function navigate(next: Route): void {
  if (noteEntry) {
    // The open note's history entry becomes the new view's: Back then leaves the view.
    noteEntry = false;
    history.replaceState(null, '', pathOf(next));
    editing.value = null;
  } else history.pushState(null, '', pathOf(next));
  route.value = next;
  selection.value = new Set();
}

/**
 * Opening a note is a history entry (issue 30 item 4): Back closes it, as on a phone, and the view
 * behind it stays. `noteEntry`: the current entry is the open note's.
 */
let noteEntry = false;
/** Our own history.back() (the note closed by its button): its popstate changes nothing. */
let ownBack = false;
/** How the open editor closes (saving, discarding an empty note); set by the editor. */
let editorClose: (() => void) | null = null;

export function setEditorClose(close: (() => void) | null): void {
  editorClose = close;
}

addEventListener('popstate', () => {
  if (ownBack) {
    ownBack = false;
    return;
  }
  if (noteEntry) {
    noteEntry = false;
    if (editorClose) editorClose();
    else editing.value = null;
    return;
  }
  route.value = routeFromPath(location.pathname);
});

// ---- On screen ----

export const query = signal('');
/** The search box was focused: its filters show even while it is empty (until a click elsewhere). */
export const searchOpen = signal(false);
export const filters = signal<SearchFilters>({});
export const selection = signal<ReadonlySet<string>>(new Set());
/** The note open in the editor. */
export const editing = signal<string | null>(null);
effect(() => {
  const open = editing.value !== null;
  if (open && !noteEntry) {
    history.pushState({ note: true }, '', location.href);
    noteEntry = true;
  } else if (!open && noteEntry) {
    noteEntry = false;
    ownBack = true;
    history.back();
  }
});
/**
 * Notes the open editor went on in → the note it was opened on: the editor keeps its key (its
 * dialog, focus, caret and unsaved typing) when its note's text moves into a recovered note.
 */
const editorRoots = new Map<string, string>();
export const editorKey = (id: string): string => editorRoots.get(id) ?? id;

/**
 * The text of note `from` now lives in note `to` (recovered: `from` was deleted elsewhere or is no
 * longer shared): an editor open on `from` goes on in `to` (issue 30: never close under a typist).
 */
export function continueEditing(from: string, to: string): void {
  if (editing.value !== from) return;
  editorRoots.set(to, editorKey(from));
  editing.value = to;
}

/** The card with the keyboard's attention (j/k). */
export const focused = signal<string | null>(null);

const LAYOUT_KEY = 'keepsake:layout';
export const layout = signal<'grid' | 'list'>(localStorage.getItem(LAYOUT_KEY) === 'list' ? 'list' : 'grid');
export function toggleLayout(): void {
  layout.value = layout.value === 'grid' ? 'list' : 'grid';
  localStorage.setItem(LAYOUT_KEY, layout.value);
}

interface Snackbar {
  message: string;
  undo?: () => void;
  /** The undo button's name. */
  undoLabel: string;
  id: number;
}
export const snackbar = signal<Snackbar | null>(null);
let snackbarId = 0;
export function showSnackbar(message: string, undo?: () => void, undoLabel = 'Undo'): void {
  snackbar.value = { message, undo, undoLabel, id: ++snackbarId };
}
