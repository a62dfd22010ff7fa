import { sql } from 'kysely';
import { inJsonList } from '../../db/dialect.js';
import { fastStatement } from '../../db/fastPath.js';
import { keptWhileTablesUnchanged } from '../../db/keptReads.js';
import { noteChangedFor } from '../../db/noteChanges.js';
import type { RemindersTable } from '../../db/schema.js';
import type { Db } from '../../db/types.js';
import { visibleTo } from '../../model/visibility.js';

export type ReminderRow = RemindersTable;

/**
 * The reminder's user may still see its note (D-COLLAB-1's rule, notes/visibility.ts, for the
 * user of each row rather than one given user): the scheduler reads every user's reminders.
 */
const seenByItsUser = sql<boolean>`(n.owner_id = r.user_id OR EXISTS (
  SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = r.user_id))`;

/** What a write sets; `at` null clears the reminder (the row stays, for sync pulls). */
interface ReminderValues {
  at: number | null;
  repeat: string;
  timeZone: string;
  nextAt: number | null;
}

/**
 * Stores the user's reminder on the note unless a newer write is stored (last writer wins by
 * `stampedAt`, D-SYNC-5); true when it was stored.
 */
export async function writeReminder(
  db: Db,
  key: { noteId: string; userId: number },
  values: ReminderValues,
  stampedAt: number,
  now: number,
): Promise<boolean> {
  const row = {
    at: values.at,
    repeat: values.repeat,
    time_zone: values.timeZone,
    next_at: values.nextAt,
    stamped_at: stampedAt,
    changed_at: now,
  };
  const result = await db
    .insertInto('reminders')
    .values({ note_id: key.noteId, user_id: key.userId, ...row, revision: 1 })
    .onConflict((oc) =>
      oc
        .columns(['note_id', 'user_id'])
        .doUpdateSet({ ...row, revision: sql`reminders.revision + 1` })
        .where('reminders.stamped_at', '<=', stampedAt),
    )
    .executeTakeFirst();
  const written = Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  if (written) noteChangedFor(db, key.noteId, key.userId);
  return written;
}

/** The user's set reminders on these notes (cleared ones left out). */
export async function remindersOf(
  db: Db,
  userId: number,
  noteIds: readonly string[],
): Promise<ReminderRow[]> {
  if (noteIds.length === 0) return [];
  return db
    .selectFrom('reminders')
    .selectAll()
    .where('user_id', '=', userId)
    .where('note_id', 'in', inJsonList(noteIds))
    .where('at', 'is not', null)
    .execute();
}

const reminderOfNoteStatement = fastStatement<[noteId: string, userId: number], ReminderRow>(
  'SELECT * FROM reminders WHERE note_id = ? AND user_id = ? AND at IS NOT NULL',
);

/**
 * Reminders of one note and user as last read, none included, until a reminder changes
 * (db/keptReads.ts, decision 0048): most notes have none, and every one-note answer asks.
 */
const keptReminders = keptWhileTablesUnchanged<ReminderRow>({
  name: 'reminders',
  tables: ['reminders'],
  max: 10_000,
  keepMissing: true,
});

/** remindersOf for one note: a point read, what every one-note answer asks. */
export async function reminderOfNote(
  db: Db,
  userId: number,
  noteId: string,
): Promise<ReminderRow | undefined> {
  return keptReminders(db, `${userId} ${noteId}`, () =>
    reminderOfNoteStatement.getOr(
      db,
      [noteId, userId],
      async () => (await remindersOf(db, userId, [noteId]))[0],
    ),
  );
}

/**
 * Names the state of all the user's reminders: the number of rows and the sum of their
 * revisions. A change raises a revision, so the sum; rows go only with their note, which
 * changes the list the stamp goes with (decision 0034).
 */
/**
 * reminderStamp's statement on SQLite's fast path (db/fastPath.ts): every note answer asks it,
 * reads and writes alike.
 */
const reminderStampStatement = fastStatement<[userId: number], { rows: number; revisions: number | null }>(
  'SELECT count(*) AS rows, sum(revision) AS revisions FROM reminders WHERE user_id = ?',
);

export async function reminderStamp(db: Db, userId: number): Promise<{ rows: number; revisions: number }> {
  const row = await reminderStampStatement.getOr(db, [userId], () =>
    db
      .selectFrom('reminders')
      .select((eb) => [eb.fn.countAll<number>().as('rows'), eb.fn.sum<number>('revision').as('revisions')])
      .where('user_id', '=', userId)
      .executeTakeFirst(),
  );
  return { rows: Number(row?.rows ?? 0), revisions: Number(row?.revisions ?? 0) };
}

/** The user's reminders on notes they see and have not trashed, by next time (none last). */
export async function listReminders(
  db: Db,
  userId: number,
): Promise<(ReminderRow & { title: string; at: number })[]> {
  const rows = await db
    .selectFrom('reminders as r')
    .innerJoin('notes as n', 'n.id', 'r.note_id')
    .selectAll('r')
    .select('n.title')
    .where('r.user_id', '=', userId)
    .where('r.at', 'is not', null)
    .where('n.trashed', '=', 0)
    .where(visibleTo(userId))
    .orderBy(sql`r.next_at IS NULL`)
    .orderBy('r.next_at')
    .orderBy('r.at')
    .orderBy('r.note_id')
    .execute();
  return rows as (ReminderRow & { title: string; at: number })[];
}

/** Ids of the notes whose reminder of the user changed at or after `since` (sync pulls). */
export async function reminderNotesChangedSince(db: Db, userId: number, since: number): Promise<string[]> {
  const rows = await db
    .selectFrom('reminders')
    .select('note_id')
    .where('user_id', '=', userId)
    .where('changed_at', '>=', since)
    .execute();
  return rows.map((row) => row.note_id);
}

interface DueReminder extends ReminderRow {
  title: string;
  /** The note is in the trash: the reminder does not ring, and comes back if the note is restored. */
  trashed: boolean;
  /** Its user no longer sees the note: the reminder is cancelled. */
  cancelled: boolean;
}

/** At most `limit` reminders due at `now`, oldest first, with what the ring needs. */
export async function dueReminders(db: Db, now: number, limit: number): Promise<DueReminder[]> {
  const rows = await db
    .selectFrom('reminders as r')
    .innerJoin('notes as n', 'n.id', 'r.note_id')
    .selectAll('r')
    .select(['n.title', 'n.trashed'])
    .select(seenByItsUser.as('seen'))
    .where('r.next_at', '<=', now)
    .orderBy('r.next_at')
    .limit(limit)
    .execute();
  return rows.map(({ trashed, seen, ...row }) => ({
    ...(row as ReminderRow & { title: string }),
    trashed: Number(trashed) === 1,
    cancelled: !seen,
  }));
}

/** Moves a reminder past the occurrence that rang (or cancels it with null). */
export async function advanceReminder(db: Db, row: ReminderRow, nextAt: number | null, now: number) {
  await db
    .updateTable('reminders')
    .set({ next_at: nextAt, changed_at: now, revision: sql`revision + 1` })
    .where('note_id', '=', row.note_id)
    .where('user_id', '=', row.user_id)
    .execute();
  // Its nextAt is in the user's pull: their devices hear of it.
  noteChangedFor(db, row.note_id, row.user_id);
}
