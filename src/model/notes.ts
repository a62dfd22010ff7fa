import { NoResultError, type Selectable, sql } from 'kysely';
import { inJsonList } from '../db/dialect.js';
import { fastInsert, fastRows, fastStatement, fastUpdate } from '../db/fastPath.js';
import { keptWhileTablesUnchanged, keptWhileUnchanged } from '../db/keptReads.js';
import type { NotesTable } from '../db/schema.js';
import type { Db } from '../db/types.js';
import type { NoteFilter } from '../shared/api/notes.js';
import type { NoteColor } from '../shared/colors.js';
import type { AttachmentRow } from './attachments.js';
import { visibleTo } from './visibility.js';

export type NoteRow = Selectable<NotesTable>;
export type NoteRole = 'owner' | 'collaborator';

/**
 * The columns a Note answer is made of (noteViews), and doc_id, which with the version names the
 * answer (presenter's NoteJsonCache); the field clock and versions are left out.
 */
export const NOTE_VIEW_COLUMNS = [
  'id',
  'doc_id',
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

/** A listed note with what names its answer's version (the key of presenter's NoteJsonCache). */
export interface ListedNoteVersion extends ListedNote {
  doc_id: number;
  version: number;
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
 * The note rows with whether the user collaborates on each; roleOf turns that into the role. The
 * row form of visibleTo (visibility.ts) for lookups by id: one primary-key probe per note,
 * where sharedWith would first list every note shared with the user.
 */
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

/** The user's role on a note: owner, collaborator, or none (visibleTo would leave it out). */
function roleOf(row: NoteRow & { is_collaborator: number }, userId: number): FoundNote {
  const { is_collaborator, ...note } = row;
  const role: NoteRole | undefined =
    note.owner_id === userId ? 'owner' : is_collaborator ? 'collaborator' : undefined;
  return { note, role };
}

/** A note as loaded for a decision: the row and the caller's role, or no role if they cannot see it. */
export interface FoundNote {
  note: NoteRow;
  role: NoteRole | undefined;
}

/**
 * findNoteWithRole for many ids in one query. Like it, a note the user cannot see is still
 * listed (role undefined), so a caller knows that the id is taken without another query.
 */
export async function findNotesWithRole(
  db: Db,
  noteIds: readonly string[],
  userId: number,
): Promise<Map<string, FoundNote>> {
  const found = new Map<string, FoundNote>();
  if (noteIds.length === 0) return found;
  const rows = await notesWithCollaboration(db, userId).where('n.id', 'in', inJsonList(noteIds)).execute();
  for (const row of rows) found.set(row.id, roleOf(row, userId));
  return found;
}

/**
 * One note and the user's role on it (owner or collaborator; undefined when they cannot see it),
 * for requireNoteAccess; undefined when no note has this id. The role must say what visibleTo
 * says (test/notes-visibility.test.ts).
 */
export async function findNoteWithRole(
  db: Db,
  noteId: string,
  userId: number,
): Promise<FoundNote | undefined> {
  const fast = findNoteWithRoleFast(db, noteId, userId);
  return fast ? fast.found : findNoteWithRoleWithKysely(db, noteId, userId);
}

export async function findNoteWithRoleWithKysely(
  db: Db,
  noteId: string,
  userId: number,
): Promise<FoundNote | undefined> {
  const row = await notesWithCollaboration(db, userId).where('n.id', '=', noteId).executeTakeFirst();
  return row && roleOf(row, userId);
}

/**
 * findNoteWithRole's SQLite fast path (db/fastPath.ts): the note and the reader's role in one
 * statement. test/fast-paths.test.ts pins its answers to the Kysely version's.
 */
const noteWithRoleStatement = fastStatement<
  [{ userId: number; noteId: string }],
  NoteRow & { is_collaborator: number }
>(
  `SELECT n.*,
     EXISTS (SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = @userId) AS is_collaborator
   FROM notes n WHERE n.id = @noteId`,
);

/** The fast path's answer, or undefined when `db` has none and the Kysely version must run. */
export function findNoteWithRoleFast(
  db: Db,
  noteId: string,
  userId: number,
): { found: FoundNote | undefined } | undefined {
  const fast = noteWithRoleStatement.get(db, { userId, noteId });
  return fast && { found: fast.row && roleOf(fast.row, userId) };
}

// Two plain statements rather than one with a correlated subquery each: SQLite's ordered
// aggregates (group_concat, json_group_array … ORDER BY) cost 45–70 µs a call, these 8–12.
const tagNamesStatement = fastStatement<[noteId: string], { name: string }>(
  'SELECT t.name FROM note_tags nt JOIN tags t ON t.id = nt.tag_id WHERE nt.note_id = ? ORDER BY t.name',
);
const attachmentRowsStatement = fastStatement<[noteId: string], AttachmentRow>(
  'SELECT * FROM attachments WHERE note_id = ? ORDER BY created_at, id',
);

/**
 * A note's tags and attachments, as tagsByNote and attachmentsByNote give them, for a by-id read
 * and the answer to a write (noteView); undefined when `db` has no fast path and those must run.
 * Pinned to them by test/fast-paths.test.ts.
 */
export function noteRelationsFast(
  db: Db,
  noteId: string,
): { tags: string[]; attachments: readonly AttachmentRow[] } | undefined {
  const tags = tagNamesStatement.all(db, noteId);
  const attachments = attachmentRowsFast(db, noteId);
  return tags && attachments && { tags: tags.map((tag) => tag.name), attachments };
}

/**
 * Notes' attachments as last read, until an attachment changes (db/keptReads.ts, decision
 * 0048): most notes have none, and every by-id read and write's answer asked.
 */
const keptAttachmentRows = keptWhileTablesUnchanged<readonly AttachmentRow[]>({
  name: 'attachment_rows',
  tables: ['attachments'],
  max: 10_000,
});

/** A note's attachments as attachmentsByNote gives them; undefined when `db` has no fast path. */
export function attachmentRowsFast(db: Db, noteId: string): readonly AttachmentRow[] | undefined {
  return keptAttachmentRows(db, noteId, () => attachmentRowsStatement.all(db, noteId));
}

const noteExistsStatement = fastStatement<[noteId: string], { id: string }>(
  'SELECT id FROM notes WHERE id = ?',
);

export async function noteExists(db: Db, noteId: string): Promise<boolean> {
  const row = await noteExistsStatement.getOr(db, [noteId], () =>
    db.selectFrom('notes').select('id').where('id', '=', noteId).executeTakeFirst(),
  );
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
  filter: ListFilter,
): Promise<readonly ListedNoteVersion[]> {
  return keptLists(db, `${userId}:${JSON.stringify(filter)}`, () => readListedNotes(db, userId, filter));
}

/**
 * listNotes' answers while the database is unchanged (db/keptReads.ts): a client polling its
 * list, or a conditional GET answered 304, reads no note. ~100 bytes a listed note: 50,000 of
 * them at most, a few MB.
 */
const keptLists = keptWhileUnchanged<readonly ListedNoteVersion[]>({
  maxSize: 50_000,
  sizeOf: (listed) => listed.length + 1,
});

async function readListedNotes(
  db: Db,
  userId: number,
  { filter, tag, color, pinned, limit, after }: ListFilter,
): Promise<readonly ListedNoteVersion[]> {
  let query = db
    .selectFrom('notes as n')
    .select(['n.id', 'n.doc_id', 'n.version', textBytes('n').as('bytes')])
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
  const rows = fastRows(db, query);
  if (!rows) return query.execute();
  // The select list's order; test/fast-paths.test.ts pins this to the Kysely answer.
  return (rows as [string, number, number, number][]).map(([id, doc_id, version, bytes]) => ({
    id,
    doc_id,
    version,
    bytes,
  }));
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

/**
 * Inserts the note; only doc_id, which the database assigns, is read back (no trigger changes
 * a notes row, so the rest is what was written). On the fast path doc_id is the row id SQLite
 * reports (it is the rowid's alias), so nothing is read back at all.
 */
export async function insertNote(db: Db, note: Omit<NoteRow, 'doc_id'>): Promise<NoteRow> {
  const fast = fastInsert(db, 'notes', note);
  if (fast) return { doc_id: fast.rowid, ...note };
  const { doc_id } = await db.insertInto('notes').values(note).returning('doc_id').executeTakeFirstOrThrow();
  return { doc_id, ...note };
}

/**
 * Writes `patch` to the note `row` and answers the row as stored: `row` with the patch, since no
 * trigger changes a notes row. Nothing is read back (`RETURNING *` cost ~130 µs an update on
 * SQLite, mostly copying title and content out again). On SQLite inside group commit the
 * statement runs prepared (db/fastPath.ts).
 */
export async function updateNote(db: Db, row: NoteRow, patch: Partial<Omit<NoteRow, 'doc_id' | 'id'>>) {
  // Built only when the fast path does not run: building it is part of what that saves.
  const query = () => db.updateTable('notes').set(patch).where('id', '=', row.id);
  const updated =
    fastUpdate(db, 'notes', patch, 'id', row.id)?.changes ??
    Number((await query().executeTakeFirstOrThrow()).numUpdatedRows);
  if (updated === 0) throw new NoResultError(query().toOperationNode());
  return { ...row, ...patch };
}

/** Everyone who can see each of the notes (owner and collaborators), in one query for all notes. */
export async function usersWithAccess(
  db: Db,
  notes: readonly NoteRow[],
): Promise<{ noteId: string; userId: number }[]> {
  if (notes.length === 0) return [];
  const collaborators = await collaboratorsOf(
    db,
    notes.map((n) => n.id),
  );
  return [...notes.map((n) => ({ noteId: n.id, userId: n.owner_id })), ...collaborators];
}

/** usersWithAccess for notes known by id (the live hints, issue 28); an id not found has nobody. */
export async function usersWithAccessTo(
  db: Db,
  noteIds: readonly string[],
): Promise<{ noteId: string; userId: number }[]> {
  if (noteIds.length === 0) return [];
  const owners = await db
    .selectFrom('notes')
    .select(['id as noteId', 'owner_id as userId'])
    .where('id', 'in', inJsonList(noteIds))
    .execute();
  return [...owners, ...(await collaboratorsOf(db, noteIds))];
}

function collaboratorsOf(db: Db, noteIds: readonly string[]) {
  return db
    .selectFrom('note_collaborators')
    .select(['note_id as noteId', 'user_id as userId'])
    .where('note_id', 'in', inJsonList(noteIds))
    .execute();
}

/** Every note a user owns (not those shared with them). */
export async function notesOwnedBy(db: Db, userId: number): Promise<NoteRow[]> {
  return db.selectFrom('notes').selectAll().where('owner_id', '=', userId).execute();
}

/**
 * Removes the note rows; tags, collaborators and attachment rows go with them by cascade. The
 * search documents and unused tags are for the caller (deleteNotesForGood in noteWrites.ts).
 */
export async function deleteNotes(db: Db, noteIds: readonly string[]): Promise<void> {
  await db.deleteFrom('notes').where('id', 'in', inJsonList(noteIds)).execute();
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
