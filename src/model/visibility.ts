import { sql } from 'kysely';

/**
 * Who can see a note (D-COLLAB-1): its owner and the users it is shared with, as conditions on
 * the notes row aliased `n`. Every reader of note rows composes these: lists, search and tags
 * use visibleTo, the sync pull its two halves (a shared note also counts as changed when it was
 * shared, so each half has its own "changed since"). test/notes-visibility.test.ts checks every
 * reader, and the role lookups of noteAccess.ts, against the same cases.
 */

/** The user owns the note: the index on (owner_id, updated_at) answers it. */
export function ownedBy(userId: number) {
  return sql<boolean>`n.owner_id = ${userId}`;
}

/**
 * The note is shared with the user: the user's collaborations, read once through their index
 * and kept as a list, so it is as cheap per row as ownedBy.
 */
export function sharedWith(userId: number) {
  return sql<boolean>`n.id IN (SELECT note_id FROM note_collaborators WHERE user_id = ${userId})`;
}

/**
 * The one rule: owned by or shared with the user. An OR of two indexed lookups, which SQLite
 * answers with a multi-index OR when it reads notes first (lists), as a cheap test per row when
 * it reads the search index or a tag's notes first (search, tags). `n.id IN (own ids UNION ALL
 * shared ids)` there made SQLite list every note of the user on each search: 1 s at 100,000
 * notes even for a word found in 50 notes (docs/benchmarks.md).
 */
export function visibleTo(userId: number) {
  return sql<boolean>`(${ownedBy(userId)}\n    OR ${sharedWith(userId)})`;
}
