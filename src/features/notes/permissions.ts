import { type Actor, canWrite } from '../../actor.js';
import type { Db } from '../../db/connection.js';
import { errors } from '../../errors.js';
import { findNotesWithRole, findNoteWithRole, type NoteRole, type NoteRow } from './store.js';

/**
 * What the caller wants to do with a note (D-COLLAB-1):
 * - read: see it (owner or collaborator);
 * - edit: change fields, attachments (owner or collaborator);
 * - leave: stop collaborating on it (a collaborator; the owner cannot leave its own note);
 * - own: delete permanently, share, manage other people's access (owner only).
 */
export type NoteAction = 'read' | 'edit' | 'leave' | 'own';

/** A note as loaded for a decision: the row and the caller's role, or no role if they cannot see it. */
export interface FoundNote {
  note: NoteRow;
  role: NoteRole | undefined;
}

/** Why an action is refused; each path turns it into its own answer (404, 403, `skipped`...). */
export type AccessDenial =
  | 'missing' // no note has this id
  | 'hidden' // a note has this id, but the caller cannot see it
  | 'read_only_key' // a read-only API key asked to change something (D-KEY-3)
  | 'forbidden' // the caller sees the note but their role does not allow the action
  | 'owner_cannot_leave';

export type AccessDecision =
  | { allowed: true; note: NoteRow; role: NoteRole }
  | { allowed: false; reason: AccessDenial };

/**
 * The one decision of who may do what with a note, pure so it is table-tested: REST, sync, MCP,
 * attachments, sharing and collaborators all ask it. The scope comes first, so a read-only key
 * learns nothing about notes by trying to change them.
 */
export function decideNoteAccess(
  actor: Actor,
  found: FoundNote | undefined,
  action: NoteAction,
): AccessDecision {
  if (action !== 'read' && !canWrite(actor)) return { allowed: false, reason: 'read_only_key' };
  if (!found) return { allowed: false, reason: 'missing' };
  const { note, role } = found;
  if (!role) return { allowed: false, reason: 'hidden' };
  if (action === 'own' && role !== 'owner') return { allowed: false, reason: 'forbidden' };
  if (action === 'leave' && role === 'owner') return { allowed: false, reason: 'owner_cannot_leave' };
  return { allowed: true, note, role };
}

const FORBIDDEN_MESSAGES: Record<NoteAction, string> = {
  read: 'You may not read this note',
  edit: 'You may not change this note',
  leave: 'You may not leave this note',
  own: 'Only the owner of this note may do this',
};

/** The HTTP/MCP error of a denial. A note the caller cannot see is 404, never 403 (D-ERR-2). */
export function denialError(reason: AccessDenial, action: NoteAction) {
  switch (reason) {
    case 'missing':
    case 'hidden':
      return errors.noteNotFound();
    case 'read_only_key':
      return errors.insufficientScope();
    case 'owner_cannot_leave':
      return errors.ownerCannotLeave();
    case 'forbidden':
      return errors.forbidden(FORBIDDEN_MESSAGES[action]);
  }
}

export interface RequireOptions {
  /**
   * Answer 404 rather than 403 to someone who sees the note but may not do this: the interface
   * says so for share links ("note not found or caller is not the owner").
   */
  forbiddenAsNotFound?: boolean;
}

/** Loads one note and decides; throws the denial's error. */
export async function requireNoteAccess(
  db: Db,
  actor: Actor,
  noteId: string,
  action: NoteAction,
  options: RequireOptions = {},
): Promise<{ note: NoteRow; role: NoteRole }> {
  // A read-only key asking to write is refused before anything is loaded.
  const refusedByScope = action !== 'read' && !canWrite(actor);
  const found = refusedByScope ? undefined : await findNoteWithRole(db, noteId.toLowerCase(), actor.userId);
  const decision = decideNoteAccess(actor, found, action);
  if (decision.allowed) return decision;
  const reason = decision.reason === 'forbidden' && options.forbiddenAsNotFound ? 'hidden' : decision.reason;
  throw denialError(reason, action);
}

/**
 * The notes of many ids with the caller's role, in one query, keyed by lower-case id, for
 * decideNoteAccess: an id taken by a note the caller cannot see maps to `{ note, role:
 * undefined }` (hidden); a free id is absent (missing).
 */
export async function findNotesForAccess(
  db: Db,
  actor: Actor,
  noteIds: readonly string[],
): Promise<Map<string, FoundNote>> {
  return findNotesWithRole(
    db,
    noteIds.map((id) => id.toLowerCase()),
    actor.userId,
  );
}
