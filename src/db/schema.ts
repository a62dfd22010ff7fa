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
  thumbnail_path: string | null;
  created_at: number;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  notes: NotesTable;
  tags: TagsTable;
  note_tags: NoteTagsTable;
  note_collaborators: NoteCollaboratorsTable;
  note_tombstones: NoteTombstonesTable;
  attachments: AttachmentsTable;
}
