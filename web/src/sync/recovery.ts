import { newNoteId } from '../../../src/shared/noteIds.js';
import { applyEdit, carriesText, localView, type NoteState, recoveredFields } from './outbox.js';
import { EMPTY } from './store.js';
import type { NoteFields, SyncNotice } from './types.js';

const RECOVERED =
  'Your edits were saved as a new note: the original was deleted elsewhere or is no longer shared with you.';

/**
 * Typed text is never dropped (D-SYNC-8's spirit on the device): the text of a note gone for
 * this device (deleted elsewhere, no longer shared) becomes a new note of this person's, and
 * typing that arrives after the note went follows it there.
 */
export class Recoveries {
  /**
   * Gone notes → the note their typed text was recovered into, from this tab's syncs and the
   * other tabs' notices: typing that arrives after the note went (the editor's last keystrokes)
   * follows it there. One entry per recovery, which only text typed on this device makes.
   */
  private readonly recoveredInto = new Map<string, string>();

  constructor(
    private readonly ownerId: number,
    private readonly now: () => number,
  ) {}

  /**
   * A note gone for this device (deleted, or no longer shared): its server copy and changes go,
   * but typed text never does: it becomes a new note, and the person is told.
   */
  forget(id: string, states: Map<string, NoteState>, notices: SyncNotice[]) {
    const state = states.get(id);
    if (!state || (!state.server && state.entries.length === 0)) return;
    const view = localView(state, this.ownerId);
    if (view && state.entries.some(carriesText)) this.recover(id, recoveredFields(view), states, notices);
    states.set(id, EMPTY);
  }

  /**
   * Typed text of the gone note `from` as a new note of this person's (`fields`), remembered as
   * where later typing for `from` goes (saveText), and announced. Answers the new note's id.
   */
  recover(from: string, fields: NoteFields, states: Map<string, NoteState>, notices: SyncNotice[]): string {
    const copyId = newNoteId();
    states.set(copyId, { entries: applyEdit(copyId, EMPTY, { kind: 'create', fields }, this.now()) });
    this.recoveredInto.set(from, copyId);
    notices.push({ kind: 'recoveredAsNewNote', noteId: copyId, from, message: RECOVERED });
    return copyId;
  }

  /** Another tab's notice: a recovery it made. */
  heard(notice: SyncNotice) {
    if (notice.kind === 'recoveredAsNewNote' && notice.from)
      this.recoveredInto.set(notice.from, notice.noteId);
  }

  /** The note the typed text of `id` was last recovered into, if any (a copy may be recovered again). */
  copyOf(id: string): string | undefined {
    let copy = this.recoveredInto.get(id);
    while (copy && this.recoveredInto.has(copy)) copy = this.recoveredInto.get(copy);
    return copy;
  }
}
