/**
 * Reminders as the web app shows and sets them (docs/reminders.md): the picker's times, the chip
 * on a card, the order of the Reminders view and when a reminder is due while the app is open.
 * Times are the device's local time; a reminder is set in the device's time zone.
 */
import type { NoteReminder } from '../sync/types.js';

export type Repeat = NoteReminder['repeat'];

export const REPEAT_CHOICES: { value: Repeat; label: string }[] = [
  { value: 'none', label: 'Does not repeat' },
  { value: 'daily', label: 'Daily' },
  { value: 'weekly', label: 'Weekly' },
  { value: 'monthly', label: 'Monthly' },
  { value: 'yearly', label: 'Yearly' },
];

const at = (base: Date, days: number, hour: number) => {
  const time = new Date(base);
  time.setDate(time.getDate() + days);
  time.setHours(hour, 0, 0, 0);
  return time;
};

/**
 * Keep's presets: "Later today" at 18:00 (20:00 from 17:00 on, in an hour after 19:00),
 * "Tomorrow" at 08:00, "Next week" on the next Monday at 08:00.
 */
export function presetTimes(now: Date): { laterToday: Date; tomorrow: Date; nextWeek: Date } {
  const hour = now.getHours();
  const laterToday =
    hour < 17 ? at(now, 0, 18) : hour < 19 ? at(now, 0, 20) : new Date(now.getTime() + 60 * 60 * 1000);
  const daysToMonday = (8 - now.getDay()) % 7 || 7;
  return { laterToday, tomorrow: at(now, 1, 8), nextWeek: at(now, daysToMonday, 8) };
}

/** The reminder a picker choice sets: in the device's time zone. */
export function reminderAt(time: Date, repeat: Repeat): NoteReminder {
  return {
    at: time.toISOString(),
    repeat,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
  };
}

/** When it rings next (or rang last, once it will not ring again): the server's nextAt, else `at`. */
export function ringTime(reminder: NoteReminder): number {
  return Date.parse(reminder.nextAt ?? reminder.at);
}

/** A one-off reminder whose time has come: the chip is struck through. */
export function hasRung(reminder: NoteReminder, now: number): boolean {
  if (reminder.nextAt === null) return true;
  return reminder.repeat === 'none' && Date.parse(reminder.at) <= now;
}

const sameDay = (a: Date, b: Date) =>
  a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();

/** The chip's text: "Today, 18:00", "Tomorrow, 08:00", "Mon 3 Mar, 08:00" (locale's words). */
export function chipText(reminder: NoteReminder, now: Date, locale?: string): string {
  const time = new Date(ringTime(reminder));
  const clock = time.toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit', hour12: false });
  const tomorrow = at(now, 1, 0);
  const day = sameDay(time, now)
    ? 'Today'
    : sameDay(time, tomorrow)
      ? 'Tomorrow'
      : time.toLocaleDateString(locale, {
          weekday: 'short',
          day: 'numeric',
          month: 'short',
          ...(time.getFullYear() === now.getFullYear() ? {} : { year: 'numeric' }),
        });
  return `${day}, ${clock}`;
}

/** Reminders to ring first come first; those that rang (and will not again) last. */
export function compareReminders(a: NoteReminder, b: NoteReminder, now: number): number {
  const rungA = hasRung(a, now);
  const rungB = hasRung(b, now);
  if (rungA !== rungB) return rungA ? 1 : -1;
  return rungA ? ringTime(b) - ringTime(a) : ringTime(a) - ringTime(b);
}
