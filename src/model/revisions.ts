import type { Selectable } from 'kysely';
import type { NoteRevisionsTable } from '../db/schema.js';
import type { Db } from '../db/types.js';

export type RevisionRow = Selectable<NoteRevisionsTable>;

export async function insertRevision(db: Db, revision: RevisionRow): Promise<void> {
  await db.insertInto('note_revisions').values(revision).execute();
}

/**
 * Deletes the note's revisions that are both older than `before` and not among its `keep`
 * newest: one indexed statement (the primary key is note_id, version).
 */
export async function pruneRevisions(db: Db, noteId: string, before: number, keep: number): Promise<void> {
  await db
    .deleteFrom('note_revisions')
    .where('note_id', '=', noteId)
    .where('created_at', '<', before)
    .where('version', '<', (eb) =>
      eb
        .selectFrom('note_revisions')
        .select('version')
        .where('note_id', '=', noteId)
        .orderBy('version', 'desc')
        .limit(1)
        .offset(keep - 1),
    )
    .execute();
}

/** The note's revisions, newest first. */
export async function revisionsOf(db: Db, noteId: string): Promise<RevisionRow[]> {
  return db
    .selectFrom('note_revisions')
    .selectAll()
    .where('note_id', '=', noteId)
    .orderBy('version', 'desc')
    .execute();
}

/**
 * The title and content the note had at `version`: the newest revision at or before it (a
 * version that changed neither has no row of its own). Undefined when it was pruned.
 */
export async function revisionAt(db: Db, noteId: string, version: number): Promise<RevisionRow | undefined> {
  return db
    .selectFrom('note_revisions')
    .selectAll()
    .where('note_id', '=', noteId)
    .where('version', '<=', version)
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
}
