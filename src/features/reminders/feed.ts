/**
 * The reminders as an iCalendar feed (RFC 5545) a calendar app subscribes to: one event per
 * reminder, at its local time in its time zone (DTSTART;TZID with the zone's VTIMEZONE), its
 * repeat as an RRULE, an alarm when it is due and a link to the note. Written by ical-generator.
 */
import { getVtimezoneComponent } from '@touch4it/ical-timezones';
import ical, { ICalAlarmType, ICalEventRepeatingFreq } from 'ical-generator';
import { DateTime } from 'luxon';
import type { Repeat } from './recurrence.js';

export interface FeedEntry {
  noteId: string;
  title: string;
  at: number;
  repeat: Repeat;
  timeZone: string;
}

const FREQ: Record<Exclude<Repeat, 'none'>, ICalEventRepeatingFreq> = {
  daily: ICalEventRepeatingFreq.DAILY,
  weekly: ICalEventRepeatingFreq.WEEKLY,
  monthly: ICalEventRepeatingFreq.MONTHLY,
  yearly: ICalEventRepeatingFreq.YEARLY,
};

/**
 * The RRULE of a repeat starting at `start`, as the line ical-generator inserts. A plain
 * FREQ=MONTHLY on the 31st skips shorter months (RFC 5545 §3.3.10), where the reminder rings on
 * their last day (recurrence.ts): the 31st is every month's last day (BYMONTHDAY=-1), as
 * 29 February is February's; the 29th and 30th are "the last of the days 28..d" (BYSETPOS=-1).
 */
export function repeatRule(repeat: Exclude<Repeat, 'none'>, start: DateTime): string {
  const rule = `RRULE:FREQ=${FREQ[repeat]}`;
  if (repeat === 'monthly' && start.day === 31) return `${rule};BYMONTHDAY=-1`;
  if (repeat === 'monthly' && start.day > 28) {
    return `${rule};BYMONTHDAY=${Array.from({ length: start.day - 27 }, (_, n) => 28 + n).join(',')};BYSETPOS=-1`;
  }
  if (repeat === 'yearly' && start.month === 2 && start.day === 29) return `${rule};BYMONTH=2;BYMONTHDAY=-1`;
  return rule;
}

export function reminderCalendar(
  entries: readonly FeedEntry[],
  noteUrl: (noteId: string) => string,
  now: number,
): string {
  const calendar = ical({ name: 'Reminders', prodId: { company: 'keepsake-notes', product: 'reminders' } });
  calendar.timezone({ name: null, generator: getVtimezoneComponent });
  for (const entry of entries) {
    const start = DateTime.fromMillis(entry.at, { zone: entry.timeZone });
    const title = entry.title.trim() === '' ? 'Reminder' : entry.title;
    const event = calendar.createEvent({
      id: `reminder-${entry.noteId}`,
      start,
      timezone: entry.timeZone,
      summary: title,
      url: noteUrl(entry.noteId),
      repeating: entry.repeat === 'none' ? null : repeatRule(entry.repeat, start),
      stamp: new Date(now),
    });
    event.createAlarm({ type: ICalAlarmType.display, trigger: 0, description: title });
  }
  return calendar.toString();
}
