import { type Kysely, sql } from 'kysely';
import { engine } from '../dialect.js';

/**
 * Reminders (docs/reminders.md): one row per note and user, kept when cleared (`at` NULL) so a
 * sync pull can tell the user's other devices (changed_at); the Web Push subscriptions, the
 * server's VAPID keys, the calendar feed tokens (hashed) and the rings waiting to be pushed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const bigint = engine() === 'postgres' ? sql`BIGINT` : sql`INTEGER`;
  await sql`
    CREATE TABLE reminders (
      note_id TEXT NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
      user_id ${bigint} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      at ${bigint},
      repeat TEXT NOT NULL,
      time_zone TEXT NOT NULL,
      next_at ${bigint},
      stamped_at ${bigint} NOT NULL,
      changed_at ${bigint} NOT NULL,
      revision ${bigint} NOT NULL,
      PRIMARY KEY (note_id, user_id)
    )`.execute(db);
  await sql`CREATE INDEX reminders_due ON reminders (next_at) WHERE next_at IS NOT NULL`.execute(db);
  await sql`CREATE INDEX reminders_user ON reminders (user_id, changed_at)`.execute(db);

  await sql`
    CREATE TABLE reminder_rings (
      id TEXT PRIMARY KEY,
      user_id ${bigint} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      note_id TEXT NOT NULL,
      title TEXT NOT NULL,
      due_at ${bigint} NOT NULL,
      claimed_until ${bigint} NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX reminder_rings_claim ON reminder_rings (claimed_until)`.execute(db);

  await sql`
    CREATE TABLE push_subscriptions (
      endpoint TEXT PRIMARY KEY,
      user_id ${bigint} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      p256dh TEXT NOT NULL,
      auth TEXT NOT NULL,
      created_at ${bigint} NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX push_subscriptions_user ON push_subscriptions (user_id)`.execute(db);

  await sql`
    CREATE TABLE server_keys (
      name TEXT PRIMARY KEY,
      value TEXT NOT NULL
    )`.execute(db);

  await sql`
    CREATE TABLE reminder_feeds (
      user_id ${bigint} PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      token_hash TEXT NOT NULL UNIQUE,
      created_at ${bigint} NOT NULL
    )`.execute(db);
}
