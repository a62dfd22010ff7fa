/**
 * Keep's keyboard shortcuts (issue 13): c, l, /, j/k, Shift+J/K, Enter, e, #, f, x, Esc, ?, and
 * Ctrl+Z for the snackbar's Undo.
 * Inactive while typing in a field or with a dialog open (Escape closes those itself).
 */
import { signal } from '@preact/signals';
import type { LocalNote } from '../sync/index.js';
import { moveNote, moveToTrash, setArchived, setPinned, toggleSelected } from './actions.js';
import { editing, focused, selection, snackbar } from './state.js';

/** Asks the composer to open, for a note or a list (c and l). */
export const composerRequest = signal<{ list: boolean } | null>(null);
export const helpOpen = signal(false);

function isTyping(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))
  );
}

/**
 * Focuses the note's card. The grid is virtual (decision 0041) but always renders the focused
 * note's card: one off screen is in the page once the grid has rendered again, and focusing it
 * scrolls it into view.
 */
function focusCard(id: string | undefined): void {
  if (!id) return;
  focused.value = id;
  const card = () => document.querySelector<HTMLElement>(`article[data-note-id="${CSS.escape(id)}"]`);
  const found = card();
  if (found) found.focus();
  else requestAnimationFrame(() => card()?.focus());
}

/** The notes the action keys act on: the selection, else the focused card. */
function targets(shown: LocalNote[]): LocalNote[] {
  if (selection.value.size > 0) return shown.filter((note) => selection.value.has(note.id));
  return shown.filter((note) => note.id === focused.value);
}

/** Installs the shortcuts; `shown()` is the notes of the current view in display order. */
export function installShortcuts(shown: () => LocalNote[]): () => void {
  const onKey = (event: KeyboardEvent) => {
    if (event.defaultPrevented || isTyping(event.target) || document.querySelector('dialog[open]')) return;
    // Ctrl+Z: the snackbar's Undo, reachable without reaching for it (issue 30 item 11).
    if ((event.ctrlKey || event.metaKey) && !event.shiftKey && event.key.toLowerCase() === 'z') {
      const undo = snackbar.value?.undo;
      if (!undo) return;
      event.preventDefault();
      undo();
      snackbar.value = null;
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const notes = shown();
    const index = notes.findIndex((note) => note.id === focused.value);
    const acted = targets(notes);
    const ids = acted.map((note) => note.id);
    const handlers: Record<string, () => void> = {
      c: () => (composerRequest.value = { list: false }),
      l: () => (composerRequest.value = { list: true }),
      '/': () => document.querySelector<HTMLInputElement>('input[type="search"]')?.focus(),
      j: () => focusCard(notes[Math.min(index + 1, notes.length - 1)]?.id),
      k: () => focusCard(notes[Math.max(index - 1, 0)]?.id),
      J: () => move(shown, focused.value, 1),
      K: () => move(shown, focused.value, -1),
      Enter: () => {
        if (focused.value) editing.value = focused.value;
      },
      e: () => ids.length && void setArchived(ids, !acted.every((note) => note.archived)),
      '#': () => ids.length && void moveToTrash(ids),
      f: () => ids.length && void setPinned(ids, !acted.every((note) => note.pinned)),
      x: () => focused.value && toggleSelected(focused.value),
      Escape: () => (selection.value = new Set()),
      '?': () => (helpOpen.value = true),
    };
    const handler = handlers[event.key];
    if (!handler) return;
    event.preventDefault();
    handler();
  };
  document.addEventListener('keydown', onKey);
  return () => document.removeEventListener('keydown', onKey);
}

/**
 * The Shift+J/K moves asked for, run one after another. A move is shown once its write has
 * landed, so a second quick press that read the order at once would move the note from where it
 * was, and two presses would move it one place.
 */
let moves: Promise<void> = Promise.resolve();

/** Shift+J/K: the note swaps places with its neighbour in the same section, as shown when its turn comes. */
function move(shown: () => LocalNote[], id: string | null, step: 1 | -1): void {
  const next = moves.then(async () => {
    const notes = shown();
    const note = notes.find((each) => each.id === id);
    if (!note) return;
    const section = notes.filter((other) => other.pinned === note.pinned);
    const to = section.indexOf(note) + step;
    if (to < 0 || to >= section.length) return;
    await moveNote(section, note, to);
    focusCard(note.id);
  });
  // A failed move is logged, and the ones after it still run.
  moves = next.catch((error) => console.error(error));
}

export const SHORTCUTS: [string, string][] = [
  ['c', 'New note'],
  ['l', 'New list'],
  ['/', 'Search'],
  ['j / k', 'Next / previous note'],
  ['Shift+J / Shift+K', 'Move note down / up'],
  ['Enter', 'Open note'],
  ['e', 'Archive'],
  ['#', 'Move to trash'],
  ['f', 'Pin or unpin'],
  ['x', 'Select'],
  ['Esc', 'Close, clear selection'],
  ['Ctrl+Z', 'Undo (archive, trash, colour…)'],
  ['?', 'This list'],
];
