/**
 * Rings reminders when they are due: each occurrence once, across restarts and across the
 * processes sharing a PostgreSQL database (docs/reminders.md).
 *
 * A tick claims at most CLAIM_LIMIT due reminders in one write transaction (on PostgreSQL every
 * write transaction holds the one write lock, db/postgres.ts, so two processes never claim the
 * same one): each moves to its next occurrence after now, and the occurrence that rang becomes a
 * ring row. Missed occurrences (the server was down) ring once. Then the rings are sent, at most
 * once: a ring is taken (claimed_until set) in a committed write before its push leaves, pushed
 * to every subscription of its user and deleted. A ring taken by a process that died while
 * sending it is never sent again (its pushes may have been delivered: a reminder must not ring
 * twice); the next tick deletes it and says so in the log. A ring not yet taken when a process
 * dies is sent by the next tick of any process.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { iso } from '../../clock.js';
import { transaction } from '../../db/transaction.js';
import type { Db } from '../../db/types.js';
import type { Logger } from '../../logger.js';
import type { PushSender } from './push.js';
import { occurrenceFrom, type Repeat } from './recurrence.js';
import * as store from './store.js';

/** Due reminders claimed per tick, and rings sent per tick: bounded work (decision 0006). */
export const CLAIM_LIMIT = 100;
/**
 * A taken ring still there this long after (longer than a push may take, push.ts) was being sent
 * by a process that stopped: it is deleted unsent.
 */
const ABANDONED_AFTER_MS = 60_000;
/** Often enough to push within the 5 s the contract gives. */
const TICK_MS = 1_000;

interface SchedulerDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  push: PushSender;
}

export function createReminderScheduler({ db, clock, log, push }: SchedulerDeps) {
  /** Whether a read finds work: most ticks find none and so take no write lock. */
  async function anything(table: 'reminders' | 'reminder_rings', now: number): Promise<boolean> {
    const found =
      table === 'reminders'
        ? await db
            .selectFrom('reminders')
            .select('note_id')
            .where('next_at', '<=', now)
            .limit(1)
            .executeTakeFirst()
        : await db
            .selectFrom('reminder_rings')
            .select('id')
            // Not taken (0), or taken by a process that stopped.
            .where('claimed_until', '<=', now - ABANDONED_AFTER_MS)
            .limit(1)
            .executeTakeFirst();
    return found !== undefined;
  }

  /** Moves the due reminders on and records their rings; how many were due. */
  async function claimDue(): Promise<number> {
    if (!(await anything('reminders', clock.now()))) return 0;
    return transaction(
      db,
      async (trx) => {
        const now = clock.now();
        const due = await store.dueReminders(trx, now, CLAIM_LIMIT);
        for (const reminder of due) {
          if (reminder.cancelled || reminder.at === null) {
            await store.advanceReminder(trx, reminder, null, now);
            continue;
          }
          const schedule = {
            at: reminder.at,
            repeat: reminder.repeat as Repeat,
            timeZone: reminder.time_zone,
          };
          // In the trash: the occurrence passes silently; a repeat rings again if the note is restored.
          await store.advanceReminder(trx, reminder, occurrenceFrom(schedule, now, true), now);
          if (reminder.trashed) continue;
          await trx
            .insertInto('reminder_rings')
            .values({
              id: randomUUID(),
              user_id: reminder.user_id,
              note_id: reminder.note_id,
              title: reminder.title,
              due_at: reminder.next_at!,
              claimed_until: 0,
            })
            .execute();
        }
        return due.length;
      },
      { group: true },
    );
  }

  /**
   * Takes up to CLAIM_LIMIT rings nobody took, and deletes those whose process stopped while
   * sending them (at most once: they are not sent again).
   */
  async function takeRings() {
    if (!(await anything('reminder_rings', clock.now()))) return [];
    return transaction(
      db,
      async (trx) => {
        const now = clock.now();
        const abandoned = await trx
          .deleteFrom('reminder_rings')
          .where('claimed_until', '>', 0)
          .where('claimed_until', '<=', now - ABANDONED_AFTER_MS)
          .executeTakeFirst();
        if (abandoned.numDeletedRows > 0n) {
          log.warn(
            { rings: Number(abandoned.numDeletedRows) },
            'reminder rings whose sending process stopped are not sent again',
          );
        }
        const rings = await trx
          .selectFrom('reminder_rings')
          .selectAll()
          .where('claimed_until', '=', 0)
          .orderBy('due_at')
          .limit(CLAIM_LIMIT)
          .execute();
        if (rings.length === 0) return [];
        await trx
          .updateTable('reminder_rings')
          .set({ claimed_until: now })
          .where(
            'id',
            'in',
            rings.map((ring) => ring.id),
          )
          .execute();
        return rings;
      },
      { group: true },
    );
  }

  async function send(ring: Awaited<ReturnType<typeof takeRings>>[number]): Promise<void> {
    const subscriptions = await db
      .selectFrom('push_subscriptions')
      .select(['endpoint', 'p256dh', 'auth'])
      .where('user_id', '=', ring.user_id)
      .execute();
    const payload = {
      type: 'reminder' as const,
      noteId: ring.note_id,
      title: ring.title,
      dueAt: iso(ring.due_at),
    };
    const outcomes = await Promise.all(subscriptions.map((target) => push.send(target, payload)));
    const gone = subscriptions.filter((_, n) => outcomes[n] === 'gone').map((target) => target.endpoint);
    await transaction(
      db,
      async (trx) => {
        if (gone.length > 0)
          await trx.deleteFrom('push_subscriptions').where('endpoint', 'in', gone).execute();
        await trx.deleteFrom('reminder_rings').where('id', '=', ring.id).execute();
      },
      { group: true },
    );
  }

  return {
    /** One round: claim what is due, send what rang. Returns the numbers, for tests. */
    async tick(): Promise<{ due: number; sent: number }> {
      const due = await claimDue();
      const rings = await takeRings();
      await Promise.all(rings.map(send));
      return { due, sent: rings.length };
    },

    /** Ticks every TICK_MS (the first one at once: catch-up after a restart) until stopped. */
    start(): () => Promise<void> {
      let stopped = false;
      let running: Promise<unknown> = Promise.resolve();
      let timer: NodeJS.Timeout | undefined;
      const run = () => {
        running = this.tick()
          .catch((err) => log.warn({ err }, 'reminder scheduler tick failed'))
          .finally(() => {
            if (!stopped) timer = setTimeout(run, TICK_MS);
          });
      };
      run();
      return async () => {
        stopped = true;
        clearTimeout(timer);
        await running;
      };
    },
  };
}
