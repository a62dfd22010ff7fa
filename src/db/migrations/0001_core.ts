import { type Kysely, sql } from 'kysely';

/**
 * Accounts, sessions, notes, tags, collaborators, tombstones, attachments and the search index.
 * SQLite only for now; a PostgreSQL variant will sit beside it in this file (see docs/decisions).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE users (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      email TEXT NOT NULL DEFAULT '',
      display_name TEXT NOT NULL,
      password_hash TEXT NOT NULL,
      is_owner INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL
    )`.execute(db);
  // Emails are unique ignoring case; the owner may have none (D-AUTH-1).
  await sql`CREATE UNIQUE INDEX users_email ON users (lower(email)) WHERE email <> ''`.execute(db);
  await sql`CREATE UNIQUE INDEX users_single_owner ON users (is_owner) WHERE is_owner = 1`.execute(db);

  await sql`
    CREATE TABLE sessions (
      token_hash TEXT PRIMARY KEY,
      user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX sessions_user ON sessions (user_id)`.execute(db);

  await sql`
    CREATE TABLE notes (
      doc_id INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      owner_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      title TEXT NOT NULL,
      content TEXT NOT NULL,
      color TEXT NOT NULL,
      pinned INTEGER NOT NULL,
      archived INTEGER NOT NULL,
      trashed INTEGER NOT NULL,
      trashed_at INTEGER,
      checklist_mode INTEGER NOT NULL,
      sort_order INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      version INTEGER NOT NULL,
      field_clock TEXT NOT NULL DEFAULT '{}'
    )`.execute(db);
  await sql`CREATE INDEX notes_owner_updated ON notes (owner_id, updated_at)`.execute(db);
  await sql`CREATE INDEX notes_trash_purge ON notes (trashed_at) WHERE trashed = 1`.execute(db);

  await sql`
    CREATE TABLE tags (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      name TEXT NOT NULL UNIQUE
    )`.execute(db);
  await sql`
    CREATE TABLE note_tags (
      note_id TEXT NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
      tag_id INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
      PRIMARY KEY (note_id, tag_id)
    ) WITHOUT ROWID`.execute(db);
  await sql`CREATE INDEX note_tags_tag ON note_tags (tag_id)`.execute(db);

  await sql`
    CREATE TABLE note_collaborators (
      note_id TEXT NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
      user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      added_at INTEGER NOT NULL,
      PRIMARY KEY (note_id, user_id)
    ) WITHOUT ROWID`.execute(db);
  await sql`CREATE INDEX note_collaborators_user ON note_collaborators (user_id)`.execute(db);

  // No foreign key to notes: a tombstone outlives its note by design (D-SYNC-3).
  await sql`
    CREATE TABLE note_tombstones (
      note_id TEXT NOT NULL,
      user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      deleted_at INTEGER NOT NULL,
      PRIMARY KEY (note_id, user_id)
    ) WITHOUT ROWID`.execute(db);
  await sql`CREATE INDEX note_tombstones_user_time ON note_tombstones (user_id, deleted_at)`.execute(db);
  await sql`CREATE INDEX note_tombstones_time ON note_tombstones (deleted_at)`.execute(db);

  await sql`
    CREATE TABLE attachments (
      id TEXT PRIMARY KEY,
      note_id TEXT NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
      filename TEXT NOT NULL,
      mime_type TEXT NOT NULL,
      size INTEGER NOT NULL,
      thumbnail_path TEXT,
      created_at INTEGER NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX attachments_note ON attachments (note_id, created_at)`.execute(db);

  // Full-text index keyed by notes.doc_id. Text is pre-processed in JS (see model/searchText.ts) so
  // that CJK runs become one token per character and phrase queries match substrings.
  await sql`
    CREATE VIRTUAL TABLE notes_fts USING fts5 (
      title, content, tags,
      tokenize = 'unicode61 remove_diacritics 2'
    )`.execute(db);
}
