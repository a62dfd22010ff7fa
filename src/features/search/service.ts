import type { Actor } from '../../actor.js';
import type { Db } from '../../db/connection.js';
import { errors } from '../../errors.js';
import type { Note } from '../notes/schemas.js';
import { noteViews } from '../notes/service.js';
import { buildMatchQuery } from './searchText.js';
import { searchNotes } from './store.js';

export const DEFAULT_SEARCH_LIMIT = 100;
export const MAX_SEARCH_LIMIT = 1_000;

export function createSearchService({ db }: { db: Db }) {
  return {
    /** D-SEARCH-1/2: every word must match (AND), the last as a prefix, `#word` in tags. */
    async search(actor: Actor, input: { q: string; limit?: number }): Promise<Note[]> {
      if (input.q.trim() === '') {
        throw errors.validation('q must contain a non-space character', [
          { path: '/q', message: 'must contain a non-space character' },
        ]);
      }
      const match = buildMatchQuery(input.q);
      if (match === null) return [];
      const rows = await searchNotes(db, actor.userId, match, input.limit ?? DEFAULT_SEARCH_LIMIT);
      return noteViews(db, rows);
    },
  };
}

export type SearchService = ReturnType<typeof createSearchService>;
