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
 * Deletes the note's oldest revisions: those below its first revision made at or after `before`
 * (so each made before it) and not among its `keep` newest. Both bounds are scalar subqueries
 * on the primary key (note_id, version): the first young revision is found walking up from the
 * oldest, which stops at once when there is nothing old to go, and the delete is a range of the
 * primary key below it, so with nothing to prune no row is visited. `+version` keeps the `keep` bound off the primary key, which
 * would otherwise walk every revision below the `keep`-th newest (~490 µs at a few thousand).
 * An old revision above a young one (stamped after a clock was set back) stays until the young
 * ones below it are old too: kept longer than the rule asks, never deleted early.
 * This needs no index by age: migration 0018 dropped 0015's, whose entry cost every revision
 * a page of its own in the WAL (docs/benchmarks.md, "Issue 31: revisions without an index by
 * age").
 */
async function pruneRevisions(db: Db, noteId: string, before: number, keep: number): Promise<void> {
  if (pruneStatement.run(db, { noteId, before, offset: keep - 1, unbounded: UNBOUNDED })) return;
  await db
    .deleteFrom('note_revisions')
    .where('note_id', '=', noteId)
    .where(
      'version',
      '<',
      sql<number>`coalesce((${db
        .selectFrom('note_revisions')
        .select('version')
        .where('note_id', '=', noteId)
        .where('created_at', '>=', before)
        .orderBy('version')
        .limit(1)}), ${UNBOUNDED})`,
    )
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

/** The version bound when every revision of the note is older than the window: none. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** pruneRevisions' statement on SQLite's fast path (db/fastPath.ts): the same SQL as Kysely's. */
const pruneStatement = fastStatement<
  [{ noteId: string; before: number; offset: number; unbounded: number }],
  never
>(
  `DELETE FROM note_revisions WHERE note_id = @noteId
     AND version < coalesce((SELECT version FROM note_revisions WHERE note_id = @noteId AND created_at >= @before
                             ORDER BY version LIMIT 1), @unbounded)
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
