/**
 * A reminder's wire shapes (docs/reminders.md): what NoteInput's `reminder` sets and what
 * Note.reminder holds, for the server's validation, serialization and OpenAPI and the web app.
 */
import { type Static, Type } from 'typebox';

export const REPEATS = ['none', 'daily', 'weekly', 'monthly', 'yearly'] as const;
export type Repeat = (typeof REPEATS)[number];

export const RepeatSchema = Type.Unsafe<Repeat>({
  type: 'string',
  enum: [...REPEATS],
  description: 'Rings again every day, week, month or year at the same local time; `none` rings once',
});

/** An IANA time zone name; the `time-zone` format is checked by http/validation.ts. */
const TimeZone = Type.String({
  format: 'time-zone',
  maxLength: 64,
  description: 'IANA time zone, e.g. `Europe/Berlin`; repeats keep the local time there',
});

/** What a NoteInput's `reminder` sets: null removes the caller's reminder. */
export const ReminderInput = Type.Object(
  {
    at: Type.String({ format: 'date-time', description: 'When it first rings' }),
    repeat: Type.Optional(RepeatSchema),
    timeZone: Type.Optional(TimeZone),
  },
  { title: 'ReminderInput' },
);
export type ReminderInput = Static<typeof ReminderInput>;

/** The caller's own reminder on a note (Note.reminder): nobody else sees it. */
export const Reminder = Type.Object(
  {
    at: Type.String({ format: 'date-time' }),
    repeat: RepeatSchema,
    timeZone: Type.String(),
    nextAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When it rings next; null once a one-off reminder has rung',
    }),
  },
  { $id: 'Reminder', title: 'Reminder' },
);
export type Reminder = Static<typeof Reminder>;
