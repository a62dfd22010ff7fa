/** Which notes the current view shows, in display order. */

import { signal } from '@preact/signals';
import { compareReminders } from '../model/reminders.js';
import { hasFilters, type SearchFilters, searchAsYouType } from '../model/search.js';
import { nextFrame } from '../sync/frames.js';
import type { LocalNote } from '../sync/index.js';
import { NEW_CARDS_PER_FRAME } from './frameBudget.js';
import type { Route } from './state.js';

export function isSearching(query: string, filters: SearchFilters): boolean {
  return query.trim() !== '' || hasFilters(filters);
}

/** Bumped when a search answered in part is whole. */
const searchesWhole = signal(0);

const search = searchAsYouType({
  firstMatches: NEW_CARDS_PER_FRAME,
  later: (finish) => void nextFrame(window).then(finish),
  onWhole: () => searchesWhole.value++,
});

export function notesOfView(
  notes: LocalNote[],
  route: Route,
  query: string,
  filters: SearchFilters,
): LocalNote[] {
  // Read in the caller's render, so that it renders again when a search answered in part is whole.
  searchesWhole.value;
  if (route.view === 'label')
    return search(notes, query, { ...filters, label: route.label }).filter((note) => !note.archived);
  if (isSearching(query, filters)) return search(notes, query, filters);
  if (route.view === 'archive') return notes.filter((note) => note.archived && !note.trashed);
  if (route.view === 'trash') return notes.filter((note) => note.trashed);
  if (route.view === 'reminders') {
    const now = Date.now();
    return notes
      .filter((note) => note.reminder && !note.trashed)
      .sort((a, b) => compareReminders(a.reminder!, b.reminder!, now));
  }
  return notes.filter((note) => !note.archived && !note.trashed);
}
