import { type Static, Type } from 'typebox';
import { Reminder, ReminderInput, RepeatSchema } from '../../shared/api/reminders.js';

export { Reminder, ReminderInput };

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

export const ReminderParams = Type.Object({
  noteId: Type.String({ format: 'uuid' }),
});

/** A notification's "Done": the occurrence it showed. */
export const DoneInput = Type.Object({
  dueAt: Type.String({ format: 'date-time', description: 'The dueAt of the push the notification showed' }),
});
export type DoneInput = Static<typeof DoneInput>;

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
