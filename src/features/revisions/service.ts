import type { Actor } from '../../actor.js';
import { iso } from '../../clock.js';
import type { Db } from '../../db/types.js';
import { requireNoteAccess } from '../../model/noteAccess.js';
import * as store from '../../model/revisions.js';
import type { NoteRevision } from './schemas.js';

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
