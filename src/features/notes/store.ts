import { type Selectable, sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import { inJsonList, jsonListRows } from '../../db/dialect.js';
import type { AttachmentsTable, NotesTable } from '../../db/schema.js';
import type { NoteColor, NoteFilter } from './schemas.js';

export type NoteRow = Selectable<NotesTable>;
export type AttachmentRow = Selectable<AttachmentsTable>;
export type NoteRole = 'owner' | 'collaborator';

/** The columns a Note answer is made of (noteViews); the field clock and versions are left out. */
export const NOTE_VIEW_COLUMNS = [
  'id',
  'owner_id',
  'title',
  'content',
  'color',
  'pinned',
  'archived',
  'trashed',
  'trashed_at',
  'checklist_mode',
  'sort_order',
  'created_at',
  'updated_at',
  'version',
] as const;
export type NoteViewRow = Pick<NoteRow, (typeof NOTE_VIEW_COLUMNS)[number]>;

/**
 * A note of a list before it is read: its id, and the bytes of its title and content, so that
 * the notes are read in batches bounded by size as well as by count (noteViewBatches).
 */
export interface ListedNote {
  id: string;
  bytes: number;
}

/**
 * The UTF-8 bytes of the title and content of the notes row aliased `alias`. octet_length reads
 * only the record header, never the text itself (SQLite 3.43+): listing 283 notes of 1 MB each
 * takes 1 ms this way, 800 ms with length(), which reads every page of the text.
 */
export function textBytes(alias: string) {
  return sql<number>`octet_length(${sql.ref(`${alias}.title`)}) + octet_length(${sql.ref(`${alias}.content`)})`;
}

/**
 * Ids of the notes a user may see: their own and those shared with them. Written as a UNION of
 * two indexed lookups rather than an OR, so SQLite (and later PostgreSQL) uses both indexes.
 */
export function visibleNoteIds(userId: number) {
  return sql<string>`(SELECT id FROM notes WHERE owner_id = ${userId}
    UNION ALL SELECT note_id FROM note_collaborators WHERE user_id = ${userId})`;
}

/**
 * The same rule as a condition on the notes row aliased `n`, for queries that read note rows: an
 * OR of two indexed lookups, which SQLite answers with a multi-index OR when it reads notes
 * first (lists) and as a cheap test per row when it reads the search index first. `n.id IN
 * visibleNoteIds(...)` there made SQLite list every note of the user on each search: 1 s at
 * 100,000 notes even for a word found in 50 notes (docs/benchmarks.md).
 */
export function visibleTo(userId: number) {
  return sql<boolean>`(n.owner_id = ${userId}
    OR n.id IN (SELECT note_id FROM note_collaborators WHERE user_id = ${userId}))`;
}

/** The note rows with whether the user collaborates on each; roleOf turns that into the role. */
function notesWithCollaboration(db: Db, userId: number) {
  return db
    .selectFrom('notes as n')
    .selectAll('n')
    .select(
      sql<number>`EXISTS (SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = ${userId})`.as(
        'is_collaborator',
      ),
    );
}

/** The user's role on a note: owner, collaborator, or none (the single-note visibleNoteIds). */
function roleOf(row: NoteRow & { is_collaborator: number }, userId: number) {
  const { is_collaborator, ...note } = row;
  const role: NoteRole | undefined =
    note.owner_id === userId ? 'owner' : is_collaborator ? 'collaborator' : undefined;
  return { note, role };
}

/**
 * One note and the user's role on it: the single-note form of visibleNoteIds (owner or
 * collaborator, else nothing); the two must say the same. Only requireNoteAccess calls it.
 */
export async function findNoteWithRole(
  db: Db,
  noteId: string,
  userId: number,
): Promise<{ note: NoteRow; role: NoteRole } | undefined> {
  const row = await notesWithCollaboration(db, userId).where('n.id', '=', noteId).executeTakeFirst();
  if (!row) return undefined;
  const { note, role } = roleOf(row, userId);
  return role ? { note, role } : undefined;
}

/**
 * findNoteWithRole for many ids in one query. Unlike it, a note the user cannot see is still
 * listed (role undefined), so a caller knows that the id is taken without another query.
 */
export async function findNotesWithRole(
  db: Db,
  noteIds: readonly string[],
  userId: number,
): Promise<Map<string, { note: NoteRow; role: NoteRole | undefined }>> {
  const found = new Map<string, { note: NoteRow; role: NoteRole | undefined }>();
  if (noteIds.length === 0) return found;
  const rows = await notesWithCollaboration(db, userId).where('n.id', 'in', inJsonList(noteIds)).execute();
  for (const row of rows) found.set(row.id, roleOf(row, userId));
  return found;
}

export async function noteExists(db: Db, noteId: string): Promise<boolean> {
  const row = await db.selectFrom('notes').select('id').where('id', '=', noteId).executeTakeFirst();
  return row !== undefined;
}

export interface ListFilter {
  filter: NoteFilter;
  tag?: string;
  color?: NoteColor;
  pinned?: boolean;
  limit?: number;
  /** Only the notes after this one in list order (paging). */
  after?: ListPosition;
}

/** A note's place in list order: its sort key (list_notes paging). */
export interface ListPosition {
  pinned: boolean;
  sortOrder: number;
  updatedAt: number;
  id: string;
}

/**
 * The notes a list shows, in D-NOTE-5 order (pinned first, then sortOrder ascending, then
 * updatedAt descending) with its filters. Only ids and sizes: the notes are read in batches
 * (notesByIds), so a long list never holds every note at once.
 */
export async function listNotes(
  db: Db,
  userId: number,
  { filter, tag, color, pinned, limit, after }: ListFilter,
): Promise<ListedNote[]> {
  let query = db
    .selectFrom('notes as n')
    .select(['n.id', textBytes('n').as('bytes')])
    .where(visibleTo(userId));
  if (filter === 'all') query = query.where('n.archived', '=', 0).where('n.trashed', '=', 0);
  else if (filter === 'archived') query = query.where('n.archived', '=', 1).where('n.trashed', '=', 0);
  else query = query.where('n.trashed', '=', 1);
  if (color) query = query.where('n.color', '=', color);
  if (pinned !== undefined) query = query.where('n.pinned', '=', Number(pinned));
  if (tag) {
    query = query.where('n.id', 'in', (eb) =>
      eb
        .selectFrom('note_tags as nt')
        .innerJoin('tags as t', 't.id', 'nt.tag_id')
        .select('nt.note_id')
        .where('t.name', '=', tag),
    );
  }
  if (after) {
    // Keyset paging: everything that sorts after `after` in the order below.
    const pinnedAsAfter = ['n.pinned', '=', Number(after.pinned)] as const;
    const sortOrderAsAfter = ['n.sort_order', '=', after.sortOrder] as const;
    query = query.where((eb) =>
      eb.or([
        eb('n.pinned', '<', Number(after.pinned)),
        eb.and([eb(...pinnedAsAfter), eb('n.sort_order', '>', after.sortOrder)]),
        eb.and([eb(...pinnedAsAfter), eb(...sortOrderAsAfter), eb('n.updated_at', '<', after.updatedAt)]),
        eb.and([
          eb(...pinnedAsAfter),
          eb(...sortOrderAsAfter),
          eb('n.updated_at', '=', after.updatedAt),
          eb('n.id', '>', after.id),
        ]),
      ]),
    );
  }
  // The id last makes the order total, so that pages neither repeat nor skip notes that tie.
  query = query
    .orderBy('n.pinned', 'desc')
    .orderBy('n.sort_order', 'asc')
    .orderBy('n.updated_at', 'desc')
    .orderBy('n.id', 'asc');
  if (limit !== undefined) query = query.limit(limit);
  return query.execute();
}

/**
 * The notes of `noteIds` that the user may still see, in the order of `noteIds`; a note deleted
 * or unshared since the ids were read is left out.
 */
export async function notesByIds(db: Db, userId: number, noteIds: readonly string[]): Promise<NoteViewRow[]> {
  if (noteIds.length === 0) return [];
  const rows = await db
    .selectFrom('notes as n')
    .select(NOTE_VIEW_COLUMNS.map((column) => `n.${column}` as const))
    .where('n.id', 'in', inJsonList(noteIds))
    .where(visibleTo(userId))
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return noteIds.flatMap((id) => byId.get(id) ?? []);
}

export async function insertNote(db: Db, note: Omit<NoteRow, 'doc_id'>): Promise<NoteRow> {
  return db.insertInto('notes').values(note).returningAll().executeTakeFirstOrThrow();
}

export async function updateNote(db: Db, noteId: string, patch: Partial<Omit<NoteRow, 'doc_id' | 'id'>>) {
  return db.updateTable('notes').set(patch).where('id', '=', noteId).returningAll().executeTakeFirstOrThrow();
}

/** Joins a note's tag names into one string; hashtags cannot contain it (D-TAG-1). */
const TAG_SEPARATOR = '\u001f';

/**
 * Tag names per note, sorted, for many notes in one query: one row per note rather than per tag,
 * which halves the rows a 10,000-note pull reads.
 */
export async function tagsByNote(db: Db, noteIds: readonly string[]): Promise<Map<string, string[]>> {
  const byNote = new Map<string, string[]>();
  if (noteIds.length === 0) return byNote;
  const rows = await db
    .selectFrom('note_tags as nt')
    .innerJoin('tags as t', 't.id', 'nt.tag_id')
    .select((eb) => [
      'nt.note_id',
      eb.fn
        .agg<string>('group_concat', ['t.name', sql.lit(TAG_SEPARATOR)])
        .orderBy('t.name')
        .as('names'),
    ])
    .where('nt.note_id', 'in', inJsonList(noteIds))
    .groupBy('nt.note_id')
    .execute();
  for (const row of rows) byNote.set(row.note_id, row.names.split(TAG_SEPARATOR));
  return byNote;
}

/** Attachments per note for many notes in one query, oldest first. */
export async function attachmentsByNote(
  db: Db,
  noteIds: readonly string[],
): Promise<Map<string, AttachmentRow[]>> {
  const byNote = new Map<string, AttachmentRow[]>();
  if (noteIds.length === 0) return byNote;
  const rows = await db
    .selectFrom('attachments')
    .selectAll()
    .where('note_id', 'in', inJsonList(noteIds))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  for (const row of rows) {
    const list = byNote.get(row.note_id);
    if (list) list.push(row);
    else byNote.set(row.note_id, [row]);
  }
  return byNote;
}

/**
 * Replaces a note's tags, creating new tag rows and dropping tags no note uses any more (D-TAG-2).
 * Only the difference is written: an edit that keeps the hashtags costs one query.
 */
export async function replaceNoteTags(db: Db, noteId: string, names: readonly string[]): Promise<void> {
  const current = await db
    .selectFrom('note_tags as nt')
    .innerJoin('tags as t', 't.id', 'nt.tag_id')
    .select(['t.id', 't.name'])
    .where('nt.note_id', '=', noteId)
    .execute();
  const wanted = new Set(names);
  const dropped = current.filter((t) => !wanted.has(t.name)).map((t) => t.id);
  const kept = new Set(current.map((t) => t.name));
  const added = [...wanted].filter((name) => !kept.has(name));
  if (dropped.length > 0) {
    await db
      .deleteFrom('note_tags')
      .where('note_id', '=', noteId)
      .where('tag_id', 'in', inJsonList(dropped))
      .execute();
    await deleteUnusedTags(db, dropped);
  }
  await addNoteTags(db, noteId, added);
}

/**
 * Tags a note with names it does not have yet, creating the tag rows that do not exist. The
 * names are one bound parameter, so no number of them reaches SQLite's variable limit.
 */
export async function addNoteTags(db: Db, noteId: string, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  // `WHERE true`: without it SQLite reads ON CONFLICT as the join constraint of the SELECT.
  await sql`INSERT INTO tags (name) ${jsonListRows(names)} WHERE true ON CONFLICT (name) DO NOTHING`.execute(
    db,
  );
  await db
    .insertInto('note_tags')
    .columns(['note_id', 'tag_id'])
    .expression((eb) =>
      eb
        .selectFrom('tags')
        .select([sql<string>`${noteId}`.as('note_id'), 'id'])
        .where('name', 'in', inJsonList(names)),
    )
    .execute();
}

export async function deleteUnusedTags(db: Db, tagIds: readonly number[]): Promise<void> {
  if (tagIds.length === 0) return;
  await db
    .deleteFrom('tags')
    .where('id', 'in', inJsonList(tagIds))
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('note_tags').select('tag_id').whereRef('tag_id', '=', 'tags.id'))),
    )
    .execute();
}

export async function writeSearchDocument(
  db: Db,
  docId: number,
  doc: { title: string; content: string; tags: string },
): Promise<void> {
  // FTS5 answers OR REPLACE by deleting the old document of that rowid: one statement, not two.
  await sql`INSERT OR REPLACE INTO notes_fts (rowid, title, content, tags) VALUES (${docId}, ${doc.title}, ${doc.content}, ${doc.tags})`.execute(
    db,
  );
}

/** Everyone who can see each of the notes (owner and collaborators), in one query for all notes. */
export async function usersWithAccess(
  db: Db,
  notes: readonly NoteRow[],
): Promise<{ noteId: string; userId: number }[]> {
  if (notes.length === 0) return [];
  const collaborators = await db
    .selectFrom('note_collaborators')
    .select(['note_id as noteId', 'user_id as userId'])
    .where('note_id', 'in', inJsonList(notes.map((n) => n.id)))
    .execute();
  return [...notes.map((n) => ({ noteId: n.id, userId: n.owner_id })), ...collaborators];
}

/** Every note a user owns (not those shared with them). */
export async function notesOwnedBy(db: Db, userId: number): Promise<NoteRow[]> {
  return db.selectFrom('notes').selectAll().where('owner_id', '=', userId).execute();
}

const TOMBSTONE_CHUNK = 1_000;

export async function recordTombstones(
  db: Db,
  tombstones: readonly { noteId: string; userId: number }[],
  deletedAt: number,
): Promise<void> {
  // In chunks: deleting a user with many notes must stay under the bound-parameter limit.
  for (let start = 0; start < tombstones.length; start += TOMBSTONE_CHUNK) {
    await db
      .insertInto('note_tombstones')
      .values(
        tombstones
          .slice(start, start + TOMBSTONE_CHUNK)
          .map((t) => ({ note_id: t.noteId, user_id: t.userId, deleted_at: deletedAt })),
      )
      .onConflict((oc) => oc.columns(['note_id', 'user_id']).doUpdateSet({ deleted_at: deletedAt }))
      .execute();
  }
}

/** A user regained access to a note (re-shared): its old tombstone no longer applies (D-SYNC-3). */
export async function forgetTombstone(db: Db, noteId: string, userId: number): Promise<void> {
  await db
    .deleteFrom('note_tombstones')
    .where('note_id', '=', noteId)
    .where('user_id', '=', userId)
    .execute();
}

/**
 * Removes notes with everything hanging off them (tags, collaborators, attachment rows via
 * cascades; search documents and unused tags explicitly). Returns the attachment rows that were
 * removed so that their files can be deleted once the transaction has committed.
 */
export async function deleteNotes(db: Db, notes: readonly NoteRow[]): Promise<AttachmentRow[]> {
  if (notes.length === 0) return [];
  const ids = notes.map((n) => n.id);
  const attachments = await db
    .selectFrom('attachments')
    .selectAll()
    .where('note_id', 'in', inJsonList(ids))
    .execute();
  const tagIds = await db
    .selectFrom('note_tags')
    .select('tag_id')
    .distinct()
    .where('note_id', 'in', inJsonList(ids))
    .execute();
  await sql`DELETE FROM notes_fts WHERE rowid IN ${inJsonList(notes.map((n) => n.doc_id))}`.execute(db);
  await db.deleteFrom('notes').where('id', 'in', inJsonList(ids)).execute();
  await deleteUnusedTags(
    db,
    tagIds.map((t) => t.tag_id),
  );
  return attachments;
}

/** Trashed notes whose trashedAt is older than `before` (D-NOTE-4). */
export async function expiredTrash(db: Db, before: number): Promise<NoteRow[]> {
  return db
    .selectFrom('notes')
    .selectAll()
    .where('trashed', '=', 1)
    .where('trashed_at', '<', before)
    .execute();
}

export async function newestUpdate(db: Db): Promise<number> {
  const row = await db
    .selectFrom('notes')
    .select((eb) => eb.fn.max('updated_at').as('newest'))
    .executeTakeFirst();
  return Number(row?.newest ?? 0);
}
