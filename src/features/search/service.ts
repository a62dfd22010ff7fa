import type { Actor } from '../../actor.js';
import { keptWhileUnchanged } from '../../db/keptReads.js';
import type { Db } from '../../db/types.js';
import { detailPath, errors } from '../../errors.js';
import {
  collectBatches,
  createNoteJsonCache,
  type NoteJsonCache,
  noteJsonBatches,
  noteViewBatches,
} from '../../model/noteAnswers.js';
import type { ListedNoteVersion } from '../../model/notes.js';
import { indexTermsStartingWith, searchNotes } from '../../model/searchIndex.js';
import { buildMatchQuery, lastWordPrefix } from '../../model/searchText.js';
import type { Note } from '../../shared/api/notes.js';
import type { NotesService } from '../notes/service.js';
import { DEFAULT_SEARCH_LIMIT, type SearchQuery } from './schemas.js';

/** How many of the caller's newest matches are ranked by relevance; measured in docs/benchmarks.md (0003). */
const DEFAULT_RANKING_WINDOW = 1_000;

/** A last word that starts more index terms than this stays a prefix in the query (0003). */
const MAX_LAST_WORD_TERMS = 16;

export function createSearchService({
  db,
  rankingWindow = DEFAULT_RANKING_WINDOW,
  noteJson = createNoteJsonCache(),
  readers,
}: {
  db: Db;
  /** Each reader's own fields of the answers (the reminder, decision 0034). */
  readers?: Pick<NotesService, 'personalOf' | 'forReader'>;
  /** Tests configure a small window; the service uses the measured default. */
  rankingWindow?: number;
  /** Note answers kept by version (model/noteAnswers.ts), shared with the lists'. */
  noteJson?: NoteJsonCache;
}) {
  /**
   * Rankings kept while the database is unchanged, as lists are (decision 0027, "Searches"): the
   * same search asked a third time costs one statement instead of the ranking (the second
   * ranks and keeps). ~100 bytes a found note and one unit per 100 characters of words: at
   * most ~2 MB.
   */
  const keptRankings = keptWhileUnchanged<readonly ListedNoteVersion[]>({
    maxSize: 20_000,
    sizeOf: (found, key) => found.length + 1 + Math.ceil(key.length / 100),
    fromSecondRead: true,
  });

  /**
   * D-SEARCH-1/2: every word must match (AND), the last as a prefix, `#word` in tags. The
   * ranking is read now, the notes in batches as they are sent (GET /api/search streams them
   * like a list, docs/decisions/0004-streamed-lists.md).
   */
  async function ranked(actor: Actor, input: SearchQuery): Promise<readonly ListedNoteVersion[]> {
    if (input.q.trim() === '') {
      throw errors.invalidField(detailPath('/q', 'querystring'), 'must contain a non-space character');
    }
    const limit = input.limit ?? DEFAULT_SEARCH_LIMIT;
    return keptRankings(db, `${actor.userId}:${limit}:${input.q}`, () => rank(actor.userId, input.q, limit));
  }

  async function rank(userId: number, q: string, limit: number): Promise<readonly ListedNoteVersion[]> {
    const prefix = lastWordPrefix(q);
    const lastWordTerms =
      prefix === null ? null : await indexTermsStartingWith(db, prefix, MAX_LAST_WORD_TERMS);
    // No index term starts with the last word: nothing can match it.
    if (lastWordTerms?.length === 0) return [];
    const match = buildMatchQuery(q, lastWordTerms ?? undefined);
    if (match === null) return [];
    // The window is never smaller than the limit: a caller with `limit` matches gets them all.
    return searchNotes(db, userId, match, limit, Math.max(rankingWindow, limit));
  }

  return {
    /** The results as each note's answer in JSON, in batches, for GET /api/search to send as is. */
    async searchAsJson(actor: Actor, input: SearchQuery): Promise<AsyncIterable<Buffer[]>> {
      const found = await ranked(actor, input);
      const lookup = readers ? (await readers.personalOf(actor.userId)).lookup : null;
      return noteJsonBatches(db, actor.userId, found, noteJson, lookup);
    },

    async search(actor: Actor, input: SearchQuery): Promise<Note[]> {
      const found = await collectBatches(noteViewBatches(db, actor.userId, await ranked(actor, input)));
      return readers ? readers.forReader(actor.userId, found) : found;
    },
  };
}

export type SearchService = ReturnType<typeof createSearchService>;
