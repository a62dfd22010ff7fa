import { type Kysely, sql } from 'kysely';

/**
 * Per-user storage usage for the quota (docs/decisions/0008-resource-limits.md): the UTF-8
 * bytes of the titles and contents of the notes a user owns plus the bytes of their
 * attachments (file and thumbnail). Triggers keep it current on every write, whichever code
 * makes it, and call `storage_grew(user_id, bytes)` whenever a user's usage grows; the
 * connection registers that function and refuses the write when it throws (the quota).
 * Attachment thumbnails stored before this migration count as 0 bytes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE attachments ADD COLUMN thumbnail_size INTEGER NOT NULL DEFAULT 0`.execute(db);
  await sql`
    CREATE TABLE storage_usage (
      user_id INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      bytes INTEGER NOT NULL
    )`.execute(db);
  await sql`
    INSERT INTO storage_usage (user_id, bytes)
    SELECT u.id,
      coalesce((SELECT sum(length(CAST(n.title AS BLOB)) + length(CAST(n.content AS BLOB)))
                FROM notes n WHERE n.owner_id = u.id), 0)
      + coalesce((SELECT sum(a.size + a.thumbnail_size)
                  FROM attachments a JOIN notes n ON n.id = a.note_id WHERE n.owner_id = u.id), 0)
    FROM users u`.execute(db);

  await sql`
    CREATE TRIGGER storage_usage_new_user AFTER INSERT ON users BEGIN
      INSERT INTO storage_usage (user_id, bytes) VALUES (NEW.id, 0);
    END`.execute(db);
  // Only growth is checked: a write that frees space is always allowed, even over the quota.
  await sql`
    CREATE TRIGGER storage_usage_growth BEFORE UPDATE OF bytes ON storage_usage
    WHEN NEW.bytes > OLD.bytes BEGIN
      SELECT storage_grew(NEW.user_id, NEW.bytes);
    END`.execute(db);

  await sql`
    CREATE TRIGGER storage_usage_note_insert AFTER INSERT ON notes BEGIN
      UPDATE storage_usage
      SET bytes = bytes + length(CAST(NEW.title AS BLOB)) + length(CAST(NEW.content AS BLOB))
      WHERE user_id = NEW.owner_id;
    END`.execute(db);
  await sql`
    CREATE TRIGGER storage_usage_note_update AFTER UPDATE OF title, content ON notes BEGIN
      UPDATE storage_usage
      SET bytes = bytes
        - length(CAST(OLD.title AS BLOB)) - length(CAST(OLD.content AS BLOB))
        + length(CAST(NEW.title AS BLOB)) + length(CAST(NEW.content AS BLOB))
      WHERE user_id = NEW.owner_id;
    END`.execute(db);
  // BEFORE: the note's attachments are still there to count (their own delete trigger, run by
  // the cascade, finds the note gone and does nothing).
  await sql`
    CREATE TRIGGER storage_usage_note_delete BEFORE DELETE ON notes BEGIN
      UPDATE storage_usage
      SET bytes = bytes - length(CAST(OLD.title AS BLOB)) - length(CAST(OLD.content AS BLOB))
        - coalesce((SELECT sum(size + thumbnail_size) FROM attachments WHERE note_id = OLD.id), 0)
      WHERE user_id = OLD.owner_id;
    END`.execute(db);
  await sql`
    CREATE TRIGGER storage_usage_attachment_insert AFTER INSERT ON attachments BEGIN
      UPDATE storage_usage SET bytes = bytes + NEW.size + NEW.thumbnail_size
      WHERE user_id = (SELECT owner_id FROM notes WHERE id = NEW.note_id);
    END`.execute(db);
  await sql`
    CREATE TRIGGER storage_usage_attachment_delete AFTER DELETE ON attachments BEGIN
      UPDATE storage_usage SET bytes = bytes - OLD.size - OLD.thumbnail_size
      WHERE user_id = (SELECT owner_id FROM notes WHERE id = OLD.note_id);
    END`.execute(db);
}
