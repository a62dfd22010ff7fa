import type { Generated } from 'kysely';

/** Table shapes as Kysely sees them. Times are integer Unix milliseconds; booleans are 0/1. */
export interface UsersTable {
  id: Generated<number>;
  email: string;
  display_name: string;
  password_hash: string;
  is_owner: number;
  created_at: number;
}

export interface SessionsTable {
  /** SHA-256 (hex) of the cookie value; the value itself is never stored (D-AUTH-4). */
  token_hash: string;
  user_id: number;
  created_at: number;
  expires_at: number;
}

export interface NotesTable {
  /** Integer alias of the rowid, so the FTS index has a stable key (rowids may move on VACUUM). */
  doc_id: Generated<number>;
  id: string;
  owner_id: number;
  title: string;
  content: string;
  color: string;
  pinned: number;
  archived: number;
  trashed: number;
  trashed_at: number | null;
  checklist_mode: number;
  sort_order: number;
  created_at: number;
  updated_at: number;
  version: number;
  /** JSON object: NoteInput field -> timestamp of the change that last set it (D-SYNC-5). */
  field_clock: string;
  /** JSON object: NoteInput field -> note version at which its value last changed (D-SYNC-8). */
  field_versions: string;
}

export interface TagsTable {
  id: Generated<number>;
  name: string;
}

export interface NoteTagsTable {
  note_id: string;
  tag_id: number;
}

export interface NoteCollaboratorsTable {
  note_id: string;
  user_id: number;
  added_at: number;
}

export interface NoteTombstonesTable {
  note_id: string;
  /** The user who must hear of it: the owner and every collaborator at the time (D-SYNC-3). */
  user_id: number;
  deleted_at: number;
}

export interface AttachmentsTable {
  id: string;
  note_id: string;
  filename: string;
  mime_type: string;
  size: number;
  /** Storage key of the WebP thumbnail, e.g. `thumbnails/<id>.webp` (D-ATT-2). */
  thumbnail_path: string | null;
  created_at: number;
  /** SHA-256 (hex) of the file's bytes; its ETag (D-ATT-4). */
  sha256: string;
  /** Bytes of the stored thumbnail, counted in the owner's storage usage (migration 0008). */
  thumbnail_size: Generated<number>;
  /** The image's size in pixels as shown (migration 0011); NULL for images uploaded before. */
  width: number | null;
  height: number | null;
}

/**
 * An attachment object stored in PostgreSQL (migration 0010, PostgreSQL only): its bytes are the
 * rows of attachment_chunks, readable once `complete` (docs/decisions/0021-attachment-storage.md).
 */
export interface AttachmentObjectsTable {
  key: string;
  size: number;
  complete: boolean;
  /** Wall-clock ms when the write began: the start-up sweep leaves younger objects alone. */
  stored_at: number;
}

export interface AttachmentChunksTable {
  key: string;
  /** 0, 1, 2... in byte order. */
  seq: number;
  data: Buffer;
}

/** Bytes each user's notes and attachments take, kept by triggers (migration 0008). */
export interface StorageUsageTable {
  user_id: number;
  bytes: number;
}

/** A note's title and content at one version (D-SYNC-9); see migration 0008. */
export interface NoteRevisionsTable {
  note_id: string;
  version: number;
  created_at: number;
  /** The user whose write made this version. */
  author_id: number;
  title: string;
  content: string;
}

export interface ApiKeysTable {
  id: string;
  user_id: number;
  name: string;
  /** SHA-256 (hex) of the key; the key itself is never stored (D-KEY-1). */
  key_hash: string;
  key_prefix: string;
  /** Space-separated scopes, e.g. "notes:read notes:write" (D-KEY-3). */
  scopes: string;
  created_at: number;
  last_used_at: number | null;
}

export interface McpSessionsTable {
  id: string;
  key_id: string;
  created_at: number;
  last_used_at: number;
}

export interface McpSubscriptionsTable {
  session_id: string;
  note_id: string;
}

export interface ShareLinksTable {
  /** One link per note; deleting the note deletes the link (D-SHARE-3). */
  note_id: string;
  /** 32 random bytes, base64url (D-SHARE-1). */
  token: string;
  created_at: number;
}

/** PostgreSQL's search index (postgres_schema.ts); SQLite has the FTS5 table notes_fts instead. */
export interface NotesSearchTable {
  doc_id: number;
  document: string;
}

/** PostgreSQL only, one row: the floor of every write's time stamp (postgres.ts, decision 0016). */
export interface SyncClockTable {
  id: number;
  floor_ms: number;
}

/** PostgreSQL only: @fastify/rate-limit's counters, shared by every process (rateLimitStore.ts). */
export interface RateLimitsTable {
  key: string;
  count: number;
  window_ends: number;
}

/** A user's reminder on a note (migration 0013, docs/reminders.md); `at` NULL: cleared. */
export interface RemindersTable {
  note_id: string;
  user_id: number;
  at: number | null;
  /** none, daily, weekly, monthly or yearly. */
  repeat: string;
  /** IANA name; repeats keep the local time of `at` there. */
  time_zone: string;
  /** When it rings next; NULL once a one-off rang, when cleared, or cancelled. */
  next_at: number | null;
  /** Sync's last-writer-wins clock of the reminder (D-SYNC-5). */
  stamped_at: number;
  /** Server time of the last change: a sync pull sends the note again from then. */
  changed_at: number;
  /** +1 on every change: the user's list ETags name the sum. */
  revision: number;
}

/** One occurrence rung, waiting to be pushed (claimed for a while by the process sending it). */
export interface ReminderRingsTable {
  id: string;
  user_id: number;
  note_id: string;
  title: string;
  due_at: number;
  claimed_until: number;
}

export interface PushSubscriptionsTable {
  endpoint: string;
  user_id: number;
  /** The browser's P-256 public key and auth secret, base64url (RFC 8291). */
  p256dh: string;
  auth: string;
  created_at: number;
}

/** Keys the server generates once and keeps, e.g. the VAPID key pair (RFC 8292). */
export interface ServerKeysTable {
  name: string;
  value: string;
}

export interface ReminderFeedsTable {
  user_id: number;
  /** SHA-256 (hex) of the feed URL's token; the token itself is never stored. */
  token_hash: string;
  created_at: number;
}

/** Which provider account signs in as which user (single sign-on, decision 0036). */
export interface UserIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: number;
  created_at: number;
}

/** A sign-on under way: what the callback checks, found by the SHA-256 (hex) of its state. */
export interface OidcLoginsTable {
  state_hash: string;
  code_verifier: string;
  nonce: string;
  return_to: string;
  expires_at: number;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  notes: NotesTable;
  tags: TagsTable;
  note_tags: NoteTagsTable;
  note_collaborators: NoteCollaboratorsTable;
  note_tombstones: NoteTombstonesTable;
  note_revisions: NoteRevisionsTable;
  attachments: AttachmentsTable;
  api_keys: ApiKeysTable;
  mcp_sessions: McpSessionsTable;
  mcp_subscriptions: McpSubscriptionsTable;
  share_links: ShareLinksTable;
  storage_usage: StorageUsageTable;
  notes_search: NotesSearchTable;
  sync_clock: SyncClockTable;
  rate_limits: RateLimitsTable;
  attachment_objects: AttachmentObjectsTable;
  attachment_chunks: AttachmentChunksTable;
  reminders: RemindersTable;
  reminder_rings: ReminderRingsTable;
  push_subscriptions: PushSubscriptionsTable;
  server_keys: ServerKeysTable;
  reminder_feeds: ReminderFeedsTable;
  user_identities: UserIdentitiesTable;
  oidc_logins: OidcLoginsTable;
}
