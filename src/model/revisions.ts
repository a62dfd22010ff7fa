import { type Selectable, sql } from 'kysely';
import { fastInsert, fastStatement } from '../db/fastPath.js';
import type { NoteRevisionsTable } from '../db/schema.js';
import type { Db } from '../db/types.js';

type RevisionRow = Selectable<NoteRevisionsTable>;

async function insertRevision(db: Db, revision: RevisionRow): Promise<void> {
  if (fastInsert(db, 'note_revisions', revision)) return;
  await db.insertInto('note_revisions').values(revision).execute();
}

/**
 * Deletes the note's revisions that are both older than `before` and not among its `keep`
 * newest. The rows older than `before` are a range of the index on (note_id, created_at)
 * (migration 0015), so with nothing old enough the delete visits no row and the `keep`-th
 * newest version (the subquery) is never looked up. `+version` keeps the version bound off the
 * primary key: without statistics SQLite would otherwise walk the primary key over every
 * revision of the note below that version, reading each row (~490 µs at a few thousand).
 */
async function pruneRevisions(db: Db, noteId: string, before: number, keep: number): Promise<void> {
  if (pruneStatement.run(db, { noteId, before, offset: keep - 1 })) return;
  await db
    .deleteFrom('note_revisions')
    .where('note_id', '=', noteId)
    .where('created_at', '<', before)
    .where(sql<number>`+${sql.ref('version')}`, '<', (eb) =>
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

/** pruneRevisions' statement on SQLite's fast path (db/fastPath.ts): the same SQL as Kysely's. */
const pruneStatement = fastStatement<[{ noteId: string; before: number; offset: number }], never>(
  `DELETE FROM note_revisions WHERE note_id = @noteId AND created_at < @before
     AND +version < (SELECT version FROM note_revisions WHERE note_id = @noteId ORDER BY version DESC LIMIT 1 OFFSET @offset)`,
);

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

/** D-SYNC-9: a note keeps at least its last 50 revisions or those of 30 days, whichever is more. */
export const REVISIONS_KEPT = 50;
export const REVISION_RETENTION_DAYS = 30;
const REVISION_RETENTION_MS = REVISION_RETENTION_DAYS * 86_400_000;

/**
 * Records the note's current title and content as the revision of its current version, written
 * by `authorId` at `now`, and prunes what the retention rule lets go. Called in the transaction
 * of every stored change of title or content, so the bound holds at all times without a job
 * having to visit every note (docs/decisions/0005-three-way-merge-and-revisions.md). A note
 * has at most one revision per version, so below version 51 there is nothing to prune.
 */
export async function recordRevision(
  db: Db,
  note: { id: string; version: number; title: string; content: string },
  authorId: number,
  now: number,
): Promise<void> {
  await insertRevision(db, {
    note_id: note.id,
    version: note.version,
    created_at: now,
    author_id: authorId,
    title: note.title,
    content: note.content,
  });
  if (note.version > REVISIONS_KEPT)
    await pruneRevisions(db, note.id, now - REVISION_RETENTION_MS, REVISIONS_KEPT);
}
