/**
 * When a reminder rings: its first time `at`, then again by its repeat, at the same local time
 * in its time zone (a daily 09:00 Europe/Berlin rings at 09:00 Berlin time in summer and in
 * winter). Calendar arithmetic is luxon's: a month or year added to the 31st (or 29 February)
 * lands on the last day of a shorter month, and each occurrence is counted from `at`, so
 * a monthly reminder on the 31st comes back to the 31st after February.
 */
import { DateTime, type DurationLikeObject, IANAZone } from 'luxon';

import type { Repeat } from '../../shared/api/reminders.js';

export { REPEATS, type Repeat } from '../../shared/api/reminders.js';

export interface Schedule {
  /** Unix ms of the first occurrence. */
  at: number;
  repeat: Repeat;
  /** IANA name. */
  timeZone: string;
}

const UNIT: Record<Exclude<Repeat, 'none'>, keyof DurationLikeObject> = {
  daily: 'days',
  weekly: 'weeks',
  monthly: 'months',
  yearly: 'years',
};

export function isTimeZone(name: string): boolean {
  return IANAZone.isValidZone(name);
}

/** The n-th occurrence (0 is `at`), as Unix ms. */
export function occurrence(schedule: Schedule, n: number): number {
  const start = DateTime.fromMillis(schedule.at, { zone: schedule.timeZone });
  if (schedule.repeat === 'none' || n === 0) return schedule.at;
  return start.plus({ [UNIT[schedule.repeat]]: n }).toMillis();
}

/**
 * The first occurrence at or after `from` (strictly after with `strict`), or null: a one-off
 * whose time has passed. Starts a little before the estimate, so each call steps a few times.
 */
export function occurrenceFrom(schedule: Schedule, from: number, strict = false): number | null {
  const reached = (time: number) => (strict ? time > from : time >= from);
  if (reached(schedule.at)) return schedule.at;
  if (schedule.repeat === 'none') return null;
  const unit = UNIT[schedule.repeat];
  const start = DateTime.fromMillis(schedule.at, { zone: schedule.timeZone });
  const elapsed = DateTime.fromMillis(from, { zone: schedule.timeZone }).diff(start, unit).get(unit);
  let n = Math.max(1, Math.floor(elapsed) - 1);
  while (!reached(occurrence(schedule, n))) n++;
  return occurrence(schedule, n);
}
