import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Actor, ALL_SCOPES } from '../src/actor.js';
import { decideNoteAccess, type FoundNote, type NoteAction } from '../src/features/notes/permissions.js';
import type { NoteRow } from '../src/features/notes/store.js';

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
