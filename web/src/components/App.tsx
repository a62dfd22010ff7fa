import { useSignal } from '@preact/signals';
import { useCallback, useEffect, useRef } from 'preact/hooks';
import { emptyTrash } from '../app/actions.js';
import { installFocusKeeper } from '../app/focus.js';
import { handleLaunch } from '../app/launch.js';
import { learnPeopleOfSharedNotes } from '../app/people.js';
import { authenticate, boot, screen } from '../app/session.js';
import { installShortcuts } from '../app/shortcuts.js';
import {
  filters,
  pathOf,
  query,
  type Route,
  route,
  searchOpen,
  selection,
  sortedNotes,
} from '../app/state.js';
import { isSearching, notesOfView } from '../app/views.js';
import { prepareSearch } from '../model/search.js';
import type { LocalNote } from '../sync/index.js';
import { AdminPage } from './AdminPage.js';
import { AuthForm } from './AuthScreen.js';
import { Composer } from './Composer.js';
import { ConfirmHost } from './Confirm.js';
import { CompareDialog } from './Conflicts.js';
import { EditLabels, LabelNote } from './EditLabels.js';
import { Editor } from './Editor.js';
import { NoteGrid } from './NoteGrid.js';
import { ImageViewer } from './NoteImages.js';
import { ReminderNotices, ReminderPicker, RemindersBar } from './Reminders.js';
import { SessionEnded } from './SessionEnded.js';
import { SettingsPage } from './SettingsPage.js';
import { ShortcutsHelp } from './ShortcutsHelp.js';
import { LabelSuggestions, Sidebar } from './Sidebar.js';
import { Snackbar } from './Snackbar.js';
import { SearchFilters, TopBar } from './TopBar.js';
import { VersionHistory } from './VersionHistory.js';

export function App() {
  useEffect(() => {
    void boot();
  }, []);
  const current = screen.value;
  if (current.kind === 'loading') return <main class="splash" aria-busy="true" />;
  if (current.kind === 'unreachable') {
    return (
      <main class="auth">
        <div class="auth-form">
          <h1>Can't reach the server</h1>
          <p>This device has no notes stored yet, so the first visit needs the server.</p>
          <button type="button" class="primary" onClick={() => void boot()}>
            Try again
          </button>
        </div>
      </main>
    );
  }
  if (current.kind === 'sessionEnded') return <SessionEnded {...current} />;
  if (current.kind !== 'notes') {
    return (
      <main class="auth">
        <AuthForm
          mode={current.kind}
          onSubmit={(password, email) =>
            authenticate(current.kind === 'setup' ? 'setup' : 'signIn', password, email)
          }
        />
      </main>
    );
  }
  return <NotesApp />;
}

/** The same empty selection every render, so the top bar's props stay equal while typing. */
const NONE_SELECTED: LocalNote[] = [];

const INSECURE_NOTICE_KEY = 'keepsake:insecure-notice-seen';

function NotesApp() {
  const menuOpen = useSignal(false);
  const toggleMenu = useCallback(() => (menuOpen.value = !menuOpen.value), []);
  const insecureNotice = useSignal(!window.isSecureContext && !localStorage.getItem(INSECURE_NOTICE_KEY));
  const shown = notesOfView(sortedNotes.value, route.value, query.value, filters.value);
  const shownRef = useRef<LocalNote[]>(shown);
  shownRef.current = shown;
  useEffect(() => installShortcuts(() => shownRef.current), []);
  useEffect(() => void handleLaunch(), []);
  useEffect(installFocusKeeper, []);
  useEffect(() => prepareSearch(sortedNotes.value), [sortedNotes.value]);
  useEffect(() => void learnPeopleOfSharedNotes(sortedNotes.value), [sortedNotes.value]);
  // On a phone the menu covers the notes: choosing a view closes it.
  useEffect(() => {
    menuOpen.value = false;
    searchOpen.value = false;
  }, [route.value]);
  // The empty search's filters close on a click anywhere but the search box and the filters. The
  // listener stays for the app's life: one added when the filters open would come an effect (a
  // frame) later, and a click in that frame would leave them open.
  useEffect(() => {
    const close = (event: Event) => {
      if (searchOpen.value && !(event.target as Element).closest?.('.search, .filters'))
        searchOpen.value = false;
    };
    document.addEventListener('pointerdown', close);
    return () => document.removeEventListener('pointerdown', close);
  }, []);

  const view = route.value.view;
  const searching = isSearching(query.value, filters.value);
  const selected =
    selection.value.size === 0 ? NONE_SELECTED : shown.filter((note) => selection.value.has(note.id));
  return (
    <div class="app">
      <TopBar onMenu={toggleMenu} selected={selected} />
      <div class="body">
        <Sidebar open={menuOpen.value} />
        <main class="content">
          {insecureNotice.value && (
            <div class="notice">
              <p>
                This address is plain http, so the app works while online and keeps your edits while this tab
                is open, but it cannot start offline or be installed: that needs HTTPS or localhost (see
                docs/webapp.md).
              </p>
              <button
                type="button"
                class="text-button"
                onClick={() => {
                  localStorage.setItem(INSECURE_NOTICE_KEY, '1');
                  insecureNotice.value = false;
                }}
              >
                Got it
              </button>
            </div>
          )}
          {view !== 'settings' && view !== 'admin' && (
            <h1 class="visually-hidden">{searching ? 'Search results' : viewHeading(route.value)}</h1>
          )}
          {view === 'settings' && <SettingsPage />}
          {view === 'admin' && <AdminPage />}
          {(searching || searchOpen.value) && <SearchFilters />}
          {(view === 'notes' || view === 'label') && !searching && <Composer />}
          {view === 'reminders' && !searching && <RemindersBar />}
          {view === 'trash' && !searching && (
            <div class="trash-bar">
              <p>
                Notes in Trash are deleted forever after the server's retention period (30 days unless set
                otherwise).
              </p>
              <button type="button" class="text-button" onClick={emptyTrash} disabled={shown.length === 0}>
                Empty trash
              </button>
            </div>
          )}
          {/* Only the whole list is reordered: in a filtered one, hidden notes sit between the cards. */}
          {view !== 'settings' && view !== 'admin' && (
            <Sections
              notes={shown}
              view={`${pathOf(route.value)} ${query.value} ${JSON.stringify(filters.value)}`}
              empty={emptyText(view, searching)}
              reorderable={view === 'notes' && !searching}
            />
          )}
        </main>
      </div>
      <LabelSuggestions />
      <Editor />
      <ImageViewer />
      <CompareDialog />
      <VersionHistory />
      <EditLabels />
      <LabelNote />
      <ShortcutsHelp />
      <ReminderPicker />
      <ReminderNotices />
      <Snackbar />
      <ConfirmHost />
    </div>
  );
}

/** The page's one <h1> (hidden: the top bar and the menu show where you are). */
function viewHeading(route: Route): string {
  if (route.view === 'label') return route.label;
  return {
    notes: 'Notes',
    archive: 'Archive',
    trash: 'Trash',
    settings: 'Settings',
    admin: 'Users',
    reminders: 'Reminders',
  }[route.view];
}

function emptyText(view: string, searching: boolean): string {
  if (searching) return 'No matching notes';
  if (view === 'archive') return 'Your archived notes appear here';
  if (view === 'trash') return 'No notes in Trash';
  if (view === 'reminders') return 'Notes with a reminder appear here';
  return 'Notes you add appear here';
}

/** Pinned and Others, headed, when anything is pinned (as in Keep); otherwise one grid. */
function Sections({
  notes,
  view,
  empty,
  reorderable,
}: {
  notes: LocalNote[];
  view: string;
  empty: string;
  reorderable: boolean;
}) {
  if (notes.length === 0) return <p class="empty">{empty}</p>;
  const pinned = notes.filter((note) => note.pinned && !note.trashed);
  if (pinned.length === 0) return <NoteGrid notes={notes} view={view} reorderable={reorderable} />;
  const others = notes.filter((note) => !note.pinned || note.trashed);
  return (
    <>
      <section aria-labelledby="pinned-heading">
        <h2 id="pinned-heading">Pinned</h2>
        <NoteGrid notes={pinned} view={view} reorderable={reorderable} />
      </section>
      {others.length > 0 && (
        <section aria-labelledby="others-heading">
          <h2 id="others-heading">Others</h2>
          <NoteGrid notes={others} view={view} reorderable={reorderable} />
        </section>
      )}
    </>
  );
}
