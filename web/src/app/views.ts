/** Which notes the current view shows, in display order. */
import { hasFilters, type SearchFilters, searchAsYouType } from '../model/search.js';
import type { LocalNote } from '../sync/index.js';
import type { Route } from './state.js';

export function isSearching(query: string, filters: SearchFilters): boolean {
  return query.trim() !== '' || hasFilters(filters);
}

const search = searchAsYouType();

export function notesOfView(
  notes: LocalNote[],
  route: Route,
  query: string,
  filters: SearchFilters,
): LocalNote[] {
  if (route.view === 'label')
    return search(notes, query, { ...filters, label: route.label }).filter((note) => !note.archived);
  if (isSearching(query, filters)) return search(notes, query, filters);
  if (route.view === 'archive') return notes.filter((note) => note.archived && !note.trashed);
  if (route.view === 'trash') return notes.filter((note) => note.trashed);
  return notes.filter((note) => !note.archived && !note.trashed);
}
