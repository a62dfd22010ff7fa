import type { Actor } from '../../actor.js';
import { iso } from '../../clock.js';
import type { Db } from '../../db/types.js';
import { requireNoteAccess } from '../../model/noteAccess.js';
import * as store from '../../model/revisions.js';
import type { NoteRevision } from './schemas.js';

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
  await store.insertRevision(db, {
    note_id: note.id,
    version: note.version,
    created_at: now,
    author_id: authorId,
    title: note.title,
    content: note.content,
  });
  if (note.version > REVISIONS_KEPT)
    await store.pruneRevisions(db, note.id, now - REVISION_RETENTION_MS, REVISIONS_KEPT);
}

export function createRevisionsService({ db }: { db: Db }) {
  return {
    /** The note's revisions, newest first, for anyone who can read it (404 otherwise, D-ERR-2). */
    async list(actor: Actor, noteId: string): Promise<NoteRevision[]> {
      const { note } = await requireNoteAccess(db, actor, noteId, 'read');
      const rows = await store.revisionsOf(db, note.id);
      return rows.map((row) => ({
        version: row.version,
        createdAt: iso(row.created_at),
        authorId: row.author_id,
        title: row.title,
        content: row.content,
      }));
    },
  };
}

export type RevisionsService = ReturnType<typeof createRevisionsService>;
