import { type Actor, canWrite } from '../actor.js';
import { keptWhileTablesUnchanged } from '../db/keptReads.js';
import type { Db } from '../db/types.js';
import { errors } from '../errors.js';
import {
  type FoundNote,
  findNotesWithRole,
  findNoteWithRole,
  findNoteWithRoleFast,
  type NoteRole,
  type NoteRow,
} from './notes.js';

/**
 * What the caller wants to do with a note (D-COLLAB-1):
 * - read: see it (owner or collaborator);
 * - edit: change fields, attachments (owner or collaborator);
 * - leave: stop collaborating on it (a collaborator; the owner cannot leave its own note);
 * - own: delete permanently, share, manage other people's access (owner only).
 */
export type NoteAction = 'read' | 'edit' | 'leave' | 'own';

export type { FoundNote } from './notes.js';

/** Why an action is refused; each path turns it into its own answer (404, 403, `skipped`...). */
export type AccessDenial =
  | 'missing' // no note has this id
  | 'hidden' // a note has this id, but the caller cannot see it
  | 'read_only_key' // a read-only API key asked to change something (D-KEY-3)
  | 'forbidden' // the caller sees the note but their role does not allow the action
  | 'owner_cannot_leave';

declare const allowedActions: unique symbol;

/**
 * A note row with the actions a decision allowed on it. Only decideNoteAccess (and, for the
 * system's own rules, notesToDeleteBySystemRule) make one, and the write primitives of noteWrites.ts
 * take nothing else: a write that skipped the decision does not compile. `own` allows what `edit`
 * and `read` allow, `edit` allows `read`.
 */
export type AuthorizedNote<A extends NoteAction> = NoteRow & {
  readonly [allowedActions]: { readonly [action in A]: true };
};

/**
 * The actions that allowing `A` allows. An action not known when compiling (a variable of type
 * NoteAction) allows reading only.
 */
type ImpliedActions<A extends NoteAction> = [A] extends ['own']
  ? 'own' | 'edit' | 'read'
  : [A] extends ['edit']
    ? 'edit' | 'read'
    : [A] extends ['leave']
      ? 'leave' | 'read'
      : 'read';

type AccessDecision<A extends NoteAction = NoteAction> =
  | { allowed: true; note: AuthorizedNote<ImpliedActions<A>>; role: NoteRole }
  | { allowed: false; reason: AccessDenial };

/**
 * The one decision of who may do what with a note, pure so it is table-tested: REST, sync, MCP,
 * attachments, sharing and collaborators all ask it. The scope comes first, so a read-only key
 * learns nothing about notes by trying to change them.
 */
export function decideNoteAccess<A extends NoteAction>(
  actor: Actor,
  found: FoundNote | undefined,
  action: A,
): AccessDecision<A> {
  if (action !== 'read' && !canWrite(actor)) return { allowed: false, reason: 'read_only_key' };
  if (!found) return { allowed: false, reason: 'missing' };
  const { note, role } = found;
  if (!role) return { allowed: false, reason: 'hidden' };
  if (action === 'own' && role !== 'owner') return { allowed: false, reason: 'forbidden' };
  if (action === 'leave' && role === 'owner') return { allowed: false, reason: 'owner_cannot_leave' };
  return { allowed: true, note: note as AuthorizedNote<ImpliedActions<A>>, role };
}

/**
 * Notes that a rule of the system itself deletes, with no caller's note decision: trash past its
 * retention (D-NOTE-4), and the notes of a user the instance owner removes (D-AUTH-2). The one
 * other way to an AuthorizedNote, so every write without decideNoteAccess is found here.
 */
export function notesToDeleteBySystemRule(notes: readonly NoteRow[]): AuthorizedNote<'own'>[] {
  return notes as AuthorizedNote<'own'>[];
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

interface RequireOptions {
  /**
   * Answer 404 rather than 403 to someone who sees the note but may not do this: the interface
   * says so for share links ("note not found or caller is not the owner").
   */
  forbiddenAsNotFound?: boolean;
}

/** Loads one note and decides; throws the denial's error. */
export async function requireNoteAccess<A extends NoteAction>(
  db: Db,
  actor: Actor,
  noteId: string,
  action: A,
  options: RequireOptions = {},
): Promise<{ note: AuthorizedNote<ImpliedActions<A>>; role: NoteRole }> {
  // A read-only key asking to write is refused before anything is loaded.
  const refusedByScope = action !== 'read' && !canWrite(actor);
  const found = refusedByScope ? undefined : await findNoteWithRole(db, noteId.toLowerCase(), actor.userId);
  const decision = decideNoteAccess(actor, found, action);
  if (decision.allowed) return decision;
  const reason = decision.reason === 'forbidden' && options.forbiddenAsNotFound ? 'hidden' : decision.reason;
  throw denialError(reason, action);
}

/** What names the answer of a note's version (the key of the note answers' cache). */
type ReadableNote = Pick<NoteRow, 'doc_id' | 'version'>;

/**
 * Which version of a note each reader may read, until a note or a collaboration changes
 * (db/keptReads.ts): with the answer of that version kept, a read by id runs no statement at
 * all (docs/decisions/0048-kept-credentials.md). Only what was allowed is kept: ids that find
 * nothing are an attacker's to choose.
 */
const keptReadableNotes = keptWhileTablesUnchanged<ReadableNote>({
  name: 'readable_notes',
  tables: ['notes', 'note_collaborators'],
  max: 10_000,
});

/**
 * The version of a note the actor may read, as decideNoteAccess decides it, kept between calls
 * on SQLite, with the row when it was read now (not when kept); undefined when it is not known
 * this way (PostgreSQL, or not allowed): then requireNoteAccess decides, and says why.
 */
export function readableNoteVersion(
  db: Db,
  actor: Actor,
  noteId: string,
): { readable: ReadableNote; note?: AuthorizedNote<'read'> } | undefined {
  const id = noteId.toLowerCase();
  let note: AuthorizedNote<'read'> | undefined;
  const readable = keptReadableNotes(db, `${actor.userId}:${id}`, () => {
    const fast = findNoteWithRoleFast(db, id, actor.userId);
    const decision = fast && decideNoteAccess(actor, fast.found, 'read');
    if (!decision?.allowed) return undefined;
    note = decision.note;
    return { doc_id: note.doc_id, version: note.version };
  });
  return readable && { readable, note };
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
