import type { Actor } from '../../actor.js';
import { type Clock, iso } from '../../clock.js';
import { transaction } from '../../db/transaction.js';
import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import * as store from '../../model/collaborators.js';
import { requireNoteAccess } from '../../model/noteAccess.js';
import { forgetTombstone } from '../../model/tombstones.js';
import { findUserById } from '../../model/users.js';
import type { Collaborator } from '../../shared/api/people.js';
import type { CollaboratorTarget } from './schemas.js';

async function collaboratorList(db: Db, noteId: string): Promise<Collaborator[]> {
  return (await store.listCollaborators(db, noteId)).map((row) => ({
    userId: row.user_id,
    displayName: row.display_name,
    email: row.email,
    addedAt: iso(row.added_at),
  }));
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
      // Alone: sharing is rare; group commit is for the frequent note writes (decision 0025).
      return transaction(
        db,
        async (trx) => {
          const { note } = await requireNoteAccess(trx, actor, noteId, 'own');
          if (userId === note.owner_id) throw errors.ownerNotCollaborator();
          if (!(await findUserById(trx, userId))) throw errors.userNotFound();
          if (await store.isCollaborator(trx, note.id, userId)) throw errors.alreadyCollaborator();
          await store.insertCollaborator(trx, note.id, userId, clock.now());
          // Access is back: a tombstone from an earlier removal would make their devices drop it.
          await forgetTombstone(trx, note.id, userId);
          return collaboratorList(trx, note.id);
        },
        { group: false },
      );
    },

    /**
     * The owner removes anyone; a collaborator removes only themselves, by `self` or their own id
     * (D-COLLAB-2). The owner cannot leave its own note (400), however it names itself.
     */
    async remove(actor: Actor, noteId: string, target: CollaboratorTarget): Promise<void> {
      // Alone: unsharing is rare; group commit is for the frequent note writes (decision 0025).
      await transaction(
        db,
        async (trx) => {
          const userId = target === 'self' ? actor.userId : target;
          // Removing yourself is leaving; removing someone else is managing the note (owner only).
          const { note } = await requireNoteAccess(
            trx,
            actor,
            noteId,
            userId === actor.userId ? 'leave' : 'own',
          );
          if (!(await store.endCollaboration(trx, note.id, userId, clock.now())))
            throw errors.collaboratorNotFound();
        },
        { group: false },
      );
    },
  };
}
