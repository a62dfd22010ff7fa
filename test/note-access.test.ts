import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Actor } from '../src/actor.js';
import type { Db } from '../src/db/types.js';
import { decideNoteAccess, type FoundNote, type NoteAction } from '../src/model/noteAccess.js';
import type { NoteRow } from '../src/model/notes.js';
import { applyNoteFields, bumpNoteVersion, deleteNotesForGood } from '../src/model/noteWrites.js';
import { ALL_SCOPES } from '../src/shared/api/apiKeys.js';

const note = { id: 'n1', owner_id: 1 } as NoteRow;
const writer: Actor = { userId: 2, isOwner: false, via: 'session', scopes: new Set(ALL_SCOPES) };
const reader: Actor = { ...writer, via: 'key', scopes: new Set(['notes:read']) };

const FOUND: Record<string, FoundNote | undefined> = {
  missing: undefined,
  hidden: { note, role: undefined },
  collaborator: { note, role: 'collaborator' },
  owner: { note, role: 'owner' },
};

/** Expected outcome per (found, action) for a caller who may write: 'allowed' or the denial. */
const WRITER: Record<string, Record<NoteAction, string>> = {
  missing: { read: 'missing', edit: 'missing', leave: 'missing', own: 'missing' },
  hidden: { read: 'hidden', edit: 'hidden', leave: 'hidden', own: 'hidden' },
  collaborator: { read: 'allowed', edit: 'allowed', leave: 'allowed', own: 'forbidden' },
  owner: { read: 'allowed', edit: 'allowed', leave: 'owner_cannot_leave', own: 'allowed' },
};

const outcome = (actor: Actor, found: FoundNote | undefined, action: NoteAction) => {
  const decision = decideNoteAccess(actor, found, action);
  return decision.allowed ? 'allowed' : decision.reason;
};

describe('decideNoteAccess: the one note-access decision (D-COLLAB-1, D-ERR-2, D-KEY-3)', () => {
  for (const [name, found] of Object.entries(FOUND)) {
    for (const action of ['read', 'edit', 'leave', 'own'] as const) {
      const expected = WRITER[name]![action];
      it(`${name}, ${action}: ${expected}; a read-only key: ${action === 'read' ? expected : 'read_only_key'}`, () => {
        assert.equal(outcome(writer, found, action), expected);
        // The scope is decided first: a read-only key learns nothing about the note by writing.
        assert.equal(outcome(reader, found, action), action === 'read' ? expected : 'read_only_key');
      });
    }
  }

  it('hands back the note and role it allowed', () => {
    assert.deepEqual(decideNoteAccess(writer, FOUND.collaborator, 'edit'), {
      allowed: true,
      note,
      role: 'collaborator',
    });
  });
});

describe('AuthorizedNote: the write primitives take only a note a decision allowed', () => {
  /**
   * Checked when `npm run typecheck` (CI) compiles this file, never run: each @ts-expect-error
   * line fails the type check as soon as it compiles, that is as soon as a write primitive takes
   * a note that no decision allowed, or allowed less than the write needs.
   */
  function writesTheTypeCheckRefuses(db: Db) {
    const write = { now: 0, stampedAt: 0, authorId: 2 };
    const owned = decideNoteAccess(writer, FOUND.owner, 'own');
    const edited = decideNoteAccess(writer, FOUND.collaborator, 'edit');
    const read = decideNoteAccess(writer, FOUND.collaborator, 'read');
    if (!owned.allowed || !edited.allowed || !read.allowed) return;
    // @ts-expect-error a row straight from the store: no decision
    void applyNoteFields(db, note, {}, write);
    // @ts-expect-error no decision
    void bumpNoteVersion(db, note, 0);
    // @ts-expect-error no decision
    void deleteNotesForGood(db, [note], 0);
    // @ts-expect-error reading allows no write
    void applyNoteFields(db, read.note, {}, write);
    // @ts-expect-error reading allows no write
    void bumpNoteVersion(db, read.note, 0);
    // @ts-expect-error editing does not allow deleting for good
    void deleteNotesForGood(db, [edited.note], 0);
    const someAction = decideNoteAccess(writer, FOUND.owner, 'own' as NoteAction);
    // @ts-expect-error an action not known when compiling allows reading only
    if (someAction.allowed) void bumpNoteVersion(db, someAction.note, 0);
    // Allowed: an edit decision edits; owning allows editing and deleting.
    void applyNoteFields(db, edited.note, {}, write);
    void bumpNoteVersion(db, owned.note, 0);
    void deleteNotesForGood(db, [owned.note], 0);
  }

  it('hands the decided row itself to the write, branded only in its type', () => {
    const decision = decideNoteAccess(writer, FOUND.owner, 'own');
    assert.ok(decision.allowed);
    assert.equal(decision.note, note);
    assert.equal(typeof writesTheTypeCheckRefuses, 'function');
  });
});
