/**
 * Reminders: each user's own, at most one per note (docs/reminders.md). They are set through
 * NoteInput (REST, sync) or here (MCP), read with the notes (Note.reminder, decision 0034) or as
 * a list, pushed to the user's browsers when due (scheduler.ts) and published as a calendar feed.
 */
import type { Actor } from '../../actor.js';
import { requireWriteScope } from '../../actor.js';
import { type Clock, iso } from '../../clock.js';
import { randomToken, sha256Hex } from '../../crypto.js';
import { transaction } from '../../db/transaction.js';
import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import { requireNoteAccess } from '../../model/noteAccess.js';
import type { PersonalFields } from '../../model/personal.js';
import type { NoteInput } from '../../shared/api/notes.js';
import { checkEndpoint, RefusedEndpoint } from './endpoints.js';
import { reminderCalendar } from './feed.js';
import { occurrenceFrom, type Repeat, type Schedule } from './recurrence.js';
import type { ListedReminder, PushSubscriptionInput, Reminder, ReminderInput } from './schemas.js';
import * as store from './store.js';

interface RemindersDeps {
  db: Db;
  clock: Clock;
  allowPrivateEndpoints: boolean;
}

/** The stored form of a reminder a client sets; `at` parsed (the schema checked its form). */
function scheduleOf(input: ReminderInput): Schedule {
  const at = Date.parse(input.at);
  if (!Number.isFinite(at)) throw errors.invalidField('/reminder/at', 'must be a date-time');
  return { at, repeat: input.repeat ?? 'none', timeZone: input.timeZone ?? 'UTC' };
}

/**
 * When a reminder set now rings first: `at` itself (at once, if it is past: a reminder set
 * offline yesterday for this morning still rings), or for a repeat whose `at` is past, the
 * next occurrence from now.
 */
function firstRing(schedule: Schedule, now: number): number {
  if (schedule.repeat === 'none') return schedule.at;
  return occurrenceFrom(schedule, now) ?? schedule.at;
}

function reminderView(row: store.ReminderRow & { at: number }): Reminder {
  return {
    at: iso(row.at),
    repeat: row.repeat as Repeat,
    timeZone: row.time_zone,
    nextAt: row.next_at === null ? null : iso(row.next_at),
  };
}

/** Writes the user's reminder as NoteInput's `reminder` says (null clears it), last writer wins. */
async function writeReminderInput(
  trx: Db,
  key: { noteId: string; userId: number },
  input: ReminderInput | null,
  stampedAt: number,
  now: number,
): Promise<void> {
  if (input === null) {
    await store.writeReminder(
      trx,
      key,
      { at: null, repeat: 'none', timeZone: 'UTC', nextAt: null },
      stampedAt,
      now,
    );
    return;
  }
  const schedule = scheduleOf(input);
  await store.writeReminder(trx, key, { ...schedule, nextAt: firstRing(schedule, now) }, stampedAt, now);
}

/** The reminder as the notes see it: a per-user field of their answers (notes/personal.ts). */
export const reminderFields: PersonalFields = {
  async write(trx, userId, noteId, input: NoteInput, stampedAt, now) {
    if (input.reminder === undefined) return;
    await writeReminderInput(trx, { noteId, userId }, input.reminder, stampedAt, now);
  },
  async of(db, userId, noteIds) {
    const rows = await store.remindersOf(db, userId, noteIds);
    return new Map(rows.map((row) => [row.note_id, reminderView(row as store.ReminderRow & { at: number })]));
  },
  async ofNote(db, userId, noteId) {
    const row = await store.reminderOfNote(db, userId, noteId);
    return row && reminderView(row as store.ReminderRow & { at: number });
  },
  async stamp(db, userId) {
    const { rows, revisions } = await store.reminderStamp(db, userId);
    return rows === 0 ? null : `${rows}.${revisions}`;
  },
  changedSince: store.reminderNotesChangedSince,
};

const FEED_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function createRemindersService({ db, clock, allowPrivateEndpoints }: RemindersDeps) {
  /** Sets or clears the caller's reminder on a note they can see (MCP). */
  async function write(actor: Actor, noteId: string, input: ReminderInput | null): Promise<Reminder | null> {
    requireWriteScope(actor);
    const id = noteId.toLowerCase();
    await transaction(
      db,
      async (trx) => {
        await requireNoteAccess(trx, actor, id, 'read');
        const now = clock.now();
        await writeReminderInput(trx, { noteId: id, userId: actor.userId }, input, now, now);
      },
      { group: true },
    );
    const rows = await store.remindersOf(db, actor.userId, [id]);
    return rows[0] ? reminderView(rows[0] as store.ReminderRow & { at: number }) : null;
  }

  return {
    set: (actor: Actor, noteId: string, input: ReminderInput) => write(actor, noteId, input),
    clear: async (actor: Actor, noteId: string): Promise<void> => {
      await write(actor, noteId, null);
    },

    /**
     * A notification's "Done" (docs/reminders.md): a one-off reminder that rang at `dueAt` is
     * removed from the note; a repeat, or a reminder changed since that ring, stays as it is. So
     * the same "Done" sent again, or late (queued offline), changes nothing more.
     */
    async done(actor: Actor, noteId: string, dueAt: string): Promise<void> {
      requireWriteScope(actor);
      const id = noteId.toLowerCase();
      const rang = Date.parse(dueAt);
      await transaction(
        db,
        async (trx) => {
          await requireNoteAccess(trx, actor, id, 'read');
          const [row] = await store.remindersOf(trx, actor.userId, [id]);
          if (row?.repeat !== 'none' || row.next_at !== null || row.at !== rang) return;
          const now = clock.now();
          await writeReminderInput(trx, { noteId: id, userId: actor.userId }, null, now, now);
        },
        { group: true },
      );
    },

    /** The caller's reminders on notes they see and have not trashed, next to ring first. */
    async list(actor: Actor): Promise<ListedReminder[]> {
      const rows = await store.listReminders(db, actor.userId);
      return rows.map((row) => ({ noteId: row.note_id, title: row.title, ...reminderView(row) }));
    },

    /** Stores a browser's subscription for the caller (again: its keys and user are renewed). */
    async subscribe(actor: Actor, input: PushSubscriptionInput): Promise<void> {
      requireWriteScope(actor);
      try {
        await checkEndpoint(input.endpoint, allowPrivateEndpoints);
      } catch (error) {
        if (error instanceof RefusedEndpoint) throw errors.invalidField('/endpoint', error.message);
        throw error;
      }
      const row = {
        user_id: actor.userId,
        p256dh: input.keys.p256dh,
        auth: input.keys.auth,
        created_at: clock.now(),
      };
      await transaction(
        db,
        (trx) =>
          trx
            .insertInto('push_subscriptions')
            .values({ endpoint: input.endpoint, ...row })
            .onConflict((oc) => oc.column('endpoint').doUpdateSet(row))
            .execute(),
        { group: true },
      );
    },

    /** Forgets the caller's subscription of this endpoint, if any. */
    async unsubscribe(actor: Actor, endpoint: string): Promise<void> {
      requireWriteScope(actor);
      await transaction(
        db,
        (trx) =>
          trx
            .deleteFrom('push_subscriptions')
            .where('endpoint', '=', endpoint)
            .where('user_id', '=', actor.userId)
            .execute(),
        { group: true },
      );
    },

    /**
     * A new secret feed token for the caller, replacing any earlier one; only its hash is kept
     * (like API keys), so the URL is shown once.
     */
    async createFeed(actor: Actor): Promise<string> {
      requireWriteScope(actor);
      const token = randomToken();
      const row = { token_hash: sha256Hex(token), created_at: clock.now() };
      await transaction(
        db,
        (trx) =>
          trx
            .insertInto('reminder_feeds')
            .values({ user_id: actor.userId, ...row })
            .onConflict((oc) => oc.column('user_id').doUpdateSet(row))
            .execute(),
        { group: true },
      );
      return token;
    },

    async deleteFeed(actor: Actor): Promise<void> {
      requireWriteScope(actor);
      await transaction(
        db,
        (trx) => trx.deleteFrom('reminder_feeds').where('user_id', '=', actor.userId).execute(),
        { group: true },
      );
    },

    /** The calendar of the feed `token` names; 404 for any other token. */
    async feed(token: string, noteUrl: (noteId: string) => string): Promise<string> {
      const owner = FEED_TOKEN.test(token)
        ? await db
            .selectFrom('reminder_feeds')
            .select('user_id')
            .where('token_hash', '=', sha256Hex(token))
            .executeTakeFirst()
        : undefined;
      if (!owner) throw errors.feedNotFound();
      const rows = await store.listReminders(db, owner.user_id);
      const entries = rows.map((row) => ({
        noteId: row.note_id,
        title: row.title,
        at: row.at,
        repeat: row.repeat as Repeat,
        timeZone: row.time_zone,
      }));
      return reminderCalendar(entries, noteUrl, clock.now());
    },
  };
}

export type RemindersService = ReturnType<typeof createRemindersService>;
