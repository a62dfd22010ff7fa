import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import {
  occurrence,
  occurrenceFrom,
  type Repeat,
  type Schedule,
} from '../src/features/reminders/recurrence.js';

const local = (ms: number, zone: string) => DateTime.fromMillis(ms, { zone }).toFormat("yyyy-MM-dd'T'HH:mm");
const at = (text: string, zone: string) => DateTime.fromISO(text, { zone }).toMillis();

describe('reminder repeats keep local time', () => {
  it('rings a daily 09:00 Europe/Berlin reminder at 09:00 Berlin time across both DST changes', () => {
    const schedule: Schedule = {
      at: at('2026-03-27T09:00', 'Europe/Berlin'),
      repeat: 'daily',
      timeZone: 'Europe/Berlin',
    };
    const days = [0, 1, 2, 3].map((n) => occurrence(schedule, n));
    assert.deepEqual(
      days.map((ms) => local(ms, 'Europe/Berlin')),
      ['2026-03-27T09:00', '2026-03-28T09:00', '2026-03-29T09:00', '2026-03-30T09:00'],
    );
    // 08:00 UTC in winter, 07:00 UTC in summer.
    assert.deepEqual(
      days.map((ms) => new Date(ms).toISOString().slice(11, 16)),
      ['08:00', '08:00', '07:00', '07:00'],
    );
    const autumn = occurrenceFrom(schedule, at('2026-10-25T08:30', 'Europe/Berlin'));
    assert.equal(local(autumn!, 'Europe/Berlin'), '2026-10-25T09:00');
    assert.equal(new Date(autumn!).toISOString(), '2026-10-25T08:00:00.000Z');
  });

  it('rings a monthly reminder of the 31st on the last day of shorter months, and on the 31st again', () => {
    const schedule: Schedule = {
      at: at('2027-01-31T18:00', 'America/New_York'),
      repeat: 'monthly',
      timeZone: 'America/New_York',
    };
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((n) => local(occurrence(schedule, n), 'America/New_York')),
      ['2027-01-31T18:00', '2027-02-28T18:00', '2027-03-31T18:00', '2027-04-30T18:00', '2027-05-31T18:00'],
    );
    const leap: Schedule = { at: at('2028-02-29T07:00', 'UTC'), repeat: 'yearly', timeZone: 'UTC' };
    assert.deepEqual(
      [1, 4].map((n) => local(occurrence(leap, n), 'UTC')),
      ['2029-02-28T07:00', '2032-02-29T07:00'],
    );
  });

  it('finds the next occurrence strictly after a time, and none for a one-off that has rung', () => {
    const weekly: Schedule = {
      at: at('2026-01-05T10:00', 'Asia/Tokyo'),
      repeat: 'weekly',
      timeZone: 'Asia/Tokyo',
    };
    const first = weekly.at;
    assert.equal(occurrenceFrom(weekly, first), first);
    assert.equal(local(occurrenceFrom(weekly, first, true)!, 'Asia/Tokyo'), '2026-01-12T10:00');
    assert.equal(occurrenceFrom({ ...weekly, repeat: 'none' }, first, true), null);
    assert.equal(occurrenceFrom({ ...weekly, repeat: 'none' }, first - 1), first);
  });

  const zones = [
    'UTC',
    'Europe/Berlin',
    'America/New_York',
    'Australia/Sydney',
    'Asia/Kolkata',
    'America/Santiago',
  ];
  const repeats: Exclude<Repeat, 'none'>[] = ['daily', 'weekly', 'monthly', 'yearly'];
  const schedules = fc.record({
    start: fc.date({ min: new Date('2000-01-01'), max: new Date('2060-01-01'), noInvalidDate: true }),
    zone: fc.constantFrom(...zones),
    repeat: fc.constantFrom(...repeats),
    // Whole minutes from 00:00 (stepping over DST gaps and folds) to 23:59.
    minuteOfDay: fc.integer({ min: 0, max: 1439 }),
  });

  it('keeps the wall-clock time, and the day of month (or the month’s last day), for any zone', () => {
    fc.assert(
      fc.property(schedules, fc.integer({ min: 1, max: 400 }), ({ start, zone, repeat, minuteOfDay }, n) => {
        const first = DateTime.fromJSDate(start, { zone }).startOf('day').plus({ minutes: minuteOfDay });
        const schedule: Schedule = { at: first.toMillis(), repeat, timeZone: zone };
        const next = DateTime.fromMillis(occurrence(schedule, n), { zone });
        // A wall-clock time that does not exist that day (a DST gap) moves forward by the gap.
        const gapless = DateTime.fromObject(
          { ...next.toObject(), hour: first.hour, minute: first.minute },
          { zone },
        );
        if (gapless.hour === first.hour && gapless.minute === first.minute) {
          assert.equal(next.toFormat('HH:mm'), first.toFormat('HH:mm'));
        }
        if (repeat === 'monthly' || repeat === 'yearly') {
          assert.equal(next.day, Math.min(first.day, next.daysInMonth!));
        }
        const expected = first.plus({ [repeat === 'daily' ? 'days' : repeat.replace('ly', 's')]: n });
        assert.equal(next.toISODate(), expected.toISODate());
      }),
      { numRuns: 300 },
    );
  });

  it('finds the first occurrence after any time: after it, and no occurrence lies between', () => {
    fc.assert(
      fc.property(
        schedules,
        fc.integer({ min: 0, max: 3 * 365 * 24 * 60 }),
        ({ start, zone, repeat, minuteOfDay }, later) => {
          const first = DateTime.fromJSDate(start, { zone }).startOf('day').plus({ minutes: minuteOfDay });
          const schedule: Schedule = { at: first.toMillis(), repeat, timeZone: zone };
          const from = schedule.at + later * 60_000;
          const next = occurrenceFrom(schedule, from, true)!;
          assert.ok(next > from);
          let n = 0;
          while (occurrence(schedule, n) < next) n++;
          assert.equal(occurrence(schedule, n), next, 'an occurrence');
          assert.ok(n === 0 || occurrence(schedule, n - 1) <= from, 'the first after `from`');
        },
      ),
      { numRuns: 200 },
    );
  });
});
