/** Which notes the current view shows, in display order. */
import { hasFilters, noteMatcher, type SearchFilters } from '../model/search.js';
import type { LocalNote } from '../sync/index.js';
import type { Route } from './state.js';

export function isSearching(query: string, filters: SearchFilters): boolean {
  return query.trim() !== '' || hasFilters(filters);
}

export function notesOfView(
  notes: LocalNote[],
  route: Route,
  query: string,
  filters: SearchFilters,
): LocalNote[] {
  if (route.view === 'label') {
    const matches = noteMatcher(query, { ...filters, label: route.label });
    return notes.filter((note) => !note.archived && matches(note));
  }
  if (isSearching(query, filters)) return notes.filter(noteMatcher(query, filters));
  if (route.view === 'archive') return notes.filter((note) => note.archived && !note.trashed);
  if (route.view === 'trash') return notes.filter((note) => note.trashed);
  return notes.filter((note) => !note.archived && !note.trashed);
}
