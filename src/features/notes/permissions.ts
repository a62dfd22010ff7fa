import { type Actor, requireWriteScope } from '../../actor.js';
import type { Db } from '../../db/connection.js';
import { errors } from '../../errors.js';
import { findNotesWithRole, findNoteWithRole, type NoteRole, type NoteRow } from './store.js';

/**
 * What the caller wants to do with a note:
 * - read: see it (owner or collaborator);
 * - edit: change fields, attachments, leave (owner or collaborator, D-COLLAB-1);
 * - own: delete permanently, share, manage collaborators (owner only).
 */
export type NoteAction = 'read' | 'edit' | 'own';

/**
 * The one permission check for notes, used by every path that touches one (REST, sync, MCP,
 * attachments, sharing, collaborators). A note the caller cannot see is 404, never 403, so ids
 * do not leak; a collaborator asking for an owner-only action gets 403 (D-ERR-2).
 */
export async function requireNoteAccess(
  db: Db,
  actor: Actor,
  noteId: string,
  action: NoteAction,
): Promise<{ note: NoteRow; role: NoteRole }> {
  if (action !== 'read') requireWriteScope(actor);
  const found = await findNoteAccess(db, actor, noteId);
  if (!found) throw errors.noteNotFound();
  if (action === 'own' && found.role !== 'owner') {
    throw errors.forbidden('Only the owner of this note may do this');
  }
  return found;
}

/** The note and the caller's role on it, or undefined when the caller cannot see it. */
export async function findNoteAccess(
  db: Db,
  actor: Actor,
  noteId: string,
): Promise<{ note: NoteRow; role: NoteRole } | undefined> {
  return findNoteWithRole(db, noteId.toLowerCase(), actor.userId);
}

/**
 * findNoteAccess for many notes in one query, keyed by lower-case id. An id that is taken by a
 * note the caller cannot see maps to `{ note, role: undefined }`; a free id is absent.
 */
export async function findNotesAccess(
  db: Db,
  actor: Actor,
  noteIds: readonly string[],
): Promise<Map<string, { note: NoteRow; role: NoteRole | undefined }>> {
  return findNotesWithRole(
    db,
    noteIds.map((id) => id.toLowerCase()),
    actor.userId,
  );
}
