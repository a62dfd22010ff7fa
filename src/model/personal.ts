/**
 * The fields of a note answer that belong to its reader rather than to the note: today the
 * reader's reminder (features/reminders). The reminders feature provides them; the notes
 * service asks through this interface, so notes import nothing from reminders. How they join
 * the shared, cached answers: docs/decisions/0034-per-user-fields-in-cached-answers.md.
 */
import type { Db } from '../db/types.js';
import type { NoteInput } from '../shared/api/notes.js';
import type { Reminder } from '../shared/api/reminders.js';

export interface PersonalFields {
  /** Stores what `input` sets of them for the user, inside the note's write transaction. */
  write(
    trx: Db,
    userId: number,
    noteId: string,
    input: NoteInput,
    stampedAt: number,
    now: number,
  ): Promise<void>;
  /** The user's reminders on these notes, by note id (none: not in the map). */
  of(db: Db, userId: number, noteIds: readonly string[]): Promise<Map<string, Reminder>>;
  /** The user's reminder on one note (`of` for one note, in one point read). */
  ofNote(db: Db, userId: number, noteId: string): Promise<Reminder | undefined>;
  /** Names the state of all the user's personal fields (for list ETags); null: the user has none. */
  stamp(db: Db, userId: number): Promise<string | null>;
  /** Ids of the notes whose personal fields of the user changed at or after `since` (sync pulls). */
  changedSince(db: Db, userId: number, since: number): Promise<string[]>;
}

/** A reader's lookup for one answer or list: null when the reader has no personal fields at all. */
export type PersonalLookup = ((noteIds: readonly string[]) => Promise<Map<string, Reminder>>) | null;

/**
 * The shared answer of every note ends with `"reminder":null}` (noteViewOf puts it last). For a
 * reader with a reminder on the note, the `null` is replaced: one copy of that note's answer,
 * while every other note is sent as cached.
 */
const SHARED_TAIL = Buffer.from('null}');

export function spliceReminder(json: Buffer, reminder: Reminder | undefined): Buffer {
  if (reminder === undefined) return json;
  const cut = json.length - SHARED_TAIL.length;
  if (!json.subarray(cut).equals(SHARED_TAIL)) throw new Error('a note answer must end with "reminder":null');
  return Buffer.concat([json.subarray(0, cut), Buffer.from(`${JSON.stringify(reminder)}}`)]);
}
