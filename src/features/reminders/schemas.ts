import { type Static, Type } from 'typebox';
import { REPEATS, type Repeat } from './recurrence.js';

export { REPEATS, type Repeat };

const RepeatSchema = Type.Unsafe<Repeat>({
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

export const ListedReminder = Type.Object({
  noteId: Type.String({ format: 'uuid' }),
  title: Type.String(),
  at: Type.String({ format: 'date-time' }),
  repeat: RepeatSchema,
  timeZone: Type.String(),
  nextAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type ListedReminder = Static<typeof ListedReminder>;

/** A browser's PushSubscription as `toJSON()` gives it. */
export const PushSubscriptionInput = Type.Object({
  endpoint: Type.String({ minLength: 1, maxLength: 2048 }),
  expirationTime: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  keys: Type.Object({
    p256dh: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_=-]+$' }),
    auth: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_=-]+$' }),
  }),
});
export type PushSubscriptionInput = Static<typeof PushSubscriptionInput>;

export const EndpointQuery = Type.Object({
  endpoint: Type.String({ minLength: 1, maxLength: 2048 }),
});

export const PublicKey = Type.Object({
  publicKey: Type.String({ description: 'The VAPID public key, base64url: applicationServerKey' }),
});

export const FeedUrl = Type.Object({
  url: Type.String({ description: 'Secret iCalendar URL; anyone who has it can read your reminders' }),
});

export const FeedParams = Type.Object({
  token: Type.String({ maxLength: 100 }),
});

/** What a push to the user's devices holds, as JSON (decrypted by the browser). */
export interface ReminderPush {
  type: 'reminder';
  noteId: string;
  title: string;
  /** When this occurrence was due, ISO 8601. */
  dueAt: string;
}
