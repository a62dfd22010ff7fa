import type { Actor } from '../../actor.js';
import { type Clock, iso } from '../../clock.js';
import type { Db } from '../../db/connection.js';
import { errors } from '../../errors.js';
import { requireNoteAccess } from '../notes/permissions.js';
import { forgetTombstone, recordTombstones } from '../notes/store.js';
import { userNotFound } from '../users/service.js';
import { findUserById } from '../users/store.js';
import type { Collaborator, CollaboratorTarget } from './schemas.js';
import * as store from './store.js';

async function collaboratorList(db: Db, noteId: string): Promise<Collaborator[]> {
  return (await store.listCollaborators(db, noteId)).map((row) => ({
    userId: row.user_id,
    displayName: row.display_name,
    email: row.email,
    addedAt: iso(row.added_at),
  }));
}

/**
 * Ends a collaborator's access to a note and leaves them a tombstone, so their devices drop the
 * note on the next sync (D-SYNC-3). Returns false when the user was not a collaborator. Sync
 * uses it for a collaborator's delete (D-SYNC-6).
 */
export async function endCollaboration(
  db: Db,
  noteId: string,
  userId: number,
  now: number,
): Promise<boolean> {
  if (!(await store.deleteCollaborator(db, noteId, userId))) return false;
  await recordTombstones(db, [{ noteId, userId }], now);
  return true;
}

export function createCollaboratorsService({ db, clock }: { db: Db; clock: Clock }) {
  return {
    /** Owner or collaborator (docs/interface.md#authentication-rule-7). */
    async list(actor: Actor, noteId: string): Promise<Collaborator[]> {
      const { note } = await requireNoteAccess(db, actor, noteId, 'read');
      return collaboratorList(db, note.id);
    },

    /** Owner only; answers the full list (D-COLLAB-2). */
    async add(actor: Actor, noteId: string, userId: number): Promise<Collaborator[]> {
      return db.transaction().execute(async (trx) => {
        const { note } = await requireNoteAccess(trx, actor, noteId, 'own');
        if (userId === note.owner_id)
          throw errors.badRequest('owner_not_collaborator', 'The owner of a note cannot be its collaborator');
        if (!(await findUserById(trx, userId))) throw userNotFound();
        if (await store.isCollaborator(trx, note.id, userId))
          throw errors.conflict('already_collaborator', 'This user is already a collaborator');
        await store.insertCollaborator(trx, note.id, userId, clock.now());
        // Access is back: a tombstone from an earlier removal would make their devices drop it.
        await forgetTombstone(trx, note.id, userId);
        return collaboratorList(trx, note.id);
      });
    },

    /**
     * The owner removes anyone; a collaborator removes only themselves, by `self` or their own id
     * (D-COLLAB-2). The owner cannot leave its own note (400), however it names itself.
     */
    async remove(actor: Actor, noteId: string, target: CollaboratorTarget): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const { note, role } = await requireNoteAccess(trx, actor, noteId, 'edit');
        const userId = target === 'self' ? actor.userId : target;
        if (role === 'collaborator' && userId !== actor.userId)
          throw errors.forbidden('A collaborator may only remove themselves');
        if (userId === note.owner_id)
          throw errors.badRequest(
            'owner_cannot_leave',
            'The owner cannot leave its own note; delete it instead',
          );
        if (!(await endCollaboration(trx, note.id, userId, clock.now())))
          throw errors.notFound('collaborator_not_found', 'This user is not a collaborator of the note');
      });
    },
  };
}

export type CollaboratorsService = ReturnType<typeof createCollaboratorsService>;
