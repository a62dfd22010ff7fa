import { sql } from 'kysely';

/**
 * Who can see a note (D-COLLAB-1): its owner and the users it is shared with. Every reader of
 * notes (lists, search, tags, sync pull, the role lookups of permissions.ts) composes the
 * conditions of this file, so the rule is written once; test/notes-visibility.test.ts checks
 * every reader against the same cases.
 */

/** The ids of the notes shared with the user: the collaborator half of the rule. */
export function sharedNoteIds(userId: number) {
  return sql<string>`(SELECT note_id FROM note_collaborators WHERE user_id = ${userId})`;
}

/**
 * Ids of the notes a user may see: their own and those shared with them. Written as a UNION of
 * two indexed lookups rather than an OR, so SQLite (and later PostgreSQL) uses both indexes.
 */
export function visibleNoteIds(userId: number) {
  return sql<string>`(SELECT id FROM notes WHERE owner_id = ${userId}
    UNION ALL SELECT note_id FROM note_collaborators WHERE user_id = ${userId})`;
}

/**
 * The same rule as a condition on the notes row aliased `n`, for queries that read note rows: an
 * OR of two indexed lookups, which SQLite answers with a multi-index OR when it reads notes
 * first (lists) and as a cheap test per row when it reads the search index first. `n.id IN
 * visibleNoteIds(...)` there made SQLite list every note of the user on each search: 1 s at
 * 100,000 notes even for a word found in 50 notes (docs/benchmarks.md).
 */
export function visibleTo(userId: number) {
  return sql<boolean>`(n.owner_id = ${userId}
    OR n.id IN ${sharedNoteIds(userId)})`;
}
