/**
 * The writes a note is made of, for use inside a transaction: each keeps the note's tags, search
 * document, revisions and tombstones in step with its row, whichever path (REST, sync, MCP,
 * import) writes it.
 */
import { noteChanged } from '../db/noteChanges.js';
import type { Db } from '../db/types.js';
import { errors } from '../errors.js';
import { extractHashtags } from '../shared/hashtags.js';
import { isNoteId } from '../shared/noteIds.js';
import { type AttachmentRow, attachmentsOfNotes } from './attachments.js';
import type { AuthorizedNote } from './noteAccess.js';
import {
  columnPatch,
  type FieldStamp,
  fieldValue,
  NOTE_DEFAULTS,
  NOTE_FIELD_NAMES,
  type NoteField,
  type NoteFields,
  stampOf,
} from './noteFields.js';
import type { NoteRow } from './notes.js';
import * as store from './notes.js';
import { recordRevision } from './revisions.js';
import { deleteSearchDocuments, writeSearchDocument } from './searchIndex.js';
import { indexText } from './searchText.js';
import { addNoteTags, deleteUnusedTags, replaceNoteTags, tagIdsOfNotes } from './tags.js';
import { recordTombstones } from './tombstones.js';

/** The row a write stored for `note`: the same note, so what was allowed on it still is. */
function sameAuthority<N extends NoteRow>(_note: N, updated: NoteRow): N {
  return updated as N;
}

/**
 * Tags (D-TAG-2) and search document of a note. `before`: 'inserted' for a note just inserted
 * (no tags to compare), the title and content the note's tags were written from when known (an
 * update: its tags are the hashtags of those, so when the hashtags did not change, as in most
 * edits, the tags are neither read nor written), or 'unknown' (they are read and replaced).
 */
export async function indexNote(
  db: Db,
  note: NoteRow,
  before: 'inserted' | 'unknown' | Pick<NoteRow, 'title' | 'content'>,
): Promise<void> {
  const tags = extractHashtags(note.title, note.content);
  if (before === 'inserted') await addNoteTags(db, note.id, tags);
  else if (before === 'unknown' || !hadTags(before, note, tags)) await replaceNoteTags(db, note.id, tags);
  await writeSearchDocument(db, note.doc_id, {
    title: indexText(note.title),
    content: indexText(note.content),
    tags: indexText(tags.join(' ')),
  });
}

/**
 * Whether a note whose title and content were `before` had `tags`, the hashtags of `note`. An
 * edit of a title without `#` leaves the content's hashtags, and so the tags, as they were:
 * known without extracting them again from a content of any length.
 */
function hadTags(
  before: Pick<NoteRow, 'title' | 'content'>,
  note: Pick<NoteRow, 'title' | 'content'>,
  tags: readonly string[],
): boolean {
  if (before.content === note.content && !before.title.includes('#') && !note.title.includes('#'))
    return true;
  const old = extractHashtags(before.title, before.content);
  return old.length === tags.length && old.every((name, n) => name === tags[n]);
}

/**
 * Inserts a note for `ownerId`, written by `authorId` (who differs for a conflict copy of a
 * collaborator's push). Every field is stamped in the field clock with `stampedAt` (the server
 * clock for REST and MCP; for sync the change's timestamp, and 0 for defaulted fields so that
 * any later-arriving change may set them). Version 1 is its first revision (D-SYNC-9).
 */
export async function insertNote(
  db: Db,
  input: {
    ownerId: number;
    authorId: number;
    id: string;
    values: Partial<NoteFields>;
    now: number;
    stampedAt: FieldStamp;
    /** An imported note's original creation time; otherwise `now`. */
    createdAt?: number;
  },
): Promise<NoteRow> {
  // The last word on ids, whichever path a note comes by (src/shared/noteIds.ts).
  if (!isNoteId(input.id)) throw errors.invalidField('/id', 'must be a UUID (36 characters, hex and dashes)');
  const values = { ...NOTE_DEFAULTS, ...input.values };
  const clock = Object.fromEntries(NOTE_FIELD_NAMES.map((f) => [f, stampOf(input.stampedAt, f)]));
  const row = await store.insertNote(db, {
    id: input.id,
    owner_id: input.ownerId,
    title: values.title,
    content: values.content,
    color: values.color,
    pinned: Number(values.pinned),
    archived: Number(values.archived),
    trashed: Number(values.trashed),
    checklist_mode: Number(values.checklistMode),
    sort_order: values.sortOrder,
    trashed_at: values.trashed ? input.now : null,
    created_at: input.createdAt ?? input.now,
    updated_at: input.now,
    version: 1,
    field_clock: JSON.stringify(clock),
    field_versions: JSON.stringify(Object.fromEntries(NOTE_FIELD_NAMES.map((f) => [f, 1]))),
  });
  await indexNote(db, row, 'inserted');
  await recordRevision(db, row, input.authorId, input.now);
  noteChanged(db, row.id);
  return row;
}

/** One write of note fields: when the server stores it, the field stamp it carries, and by whom. */
interface NoteWrite {
  now: number;
  stampedAt: FieldStamp;
  authorId: number;
}

/**
 * Writes `values` to the note. Every field written takes the write's stamp, whether or not its
 * value changes (D-SYNC-5: an older write arriving later must lose to it). Only the fields that
 * differ are stored as a change: version + 1 and a new updatedAt that never goes backwards
 * (D-NOTE-3, D-SYNC-2); trashedAt follows trashed (D-NOTE-4); tags, the search document and a
 * revision follow title and content (D-TAG-2, D-SYNC-9). A write that changes no value keeps
 * version and updatedAt and stores only the stamps.
 */
export async function applyNoteFields<N extends AuthorizedNote<'edit'>>(
  db: Db,
  note: N,
  values: Partial<NoteFields>,
  write: NoteWrite,
): Promise<{ note: N; changed: NoteField[] }> {
  const written = NOTE_FIELD_NAMES.filter((f) => values[f] !== undefined);
  const changed = written.filter((f) => values[f] !== fieldValue(note, f));
  const clock = JSON.parse(note.field_clock) as Record<string, number>;
  for (const field of written) clock[field] = stampOf(write.stampedAt, field);
  const fieldClock = JSON.stringify(clock);
  if (changed.length === 0) {
    if (fieldClock === note.field_clock) return { note, changed };
    return {
      note: sameAuthority(note, await store.updateNote(db, note, { field_clock: fieldClock })),
      changed,
    };
  }
  const changes = Object.fromEntries(changed.map((f) => [f, values[f]])) as Partial<NoteFields>;
  const version = note.version + 1;
  const versions = JSON.parse(note.field_versions) as Record<string, number>;
  for (const field of changed) versions[field] = version;
  const patch: Partial<NoteRow> = {
    ...columnPatch(changes),
    version,
    updated_at: Math.max(write.now, note.updated_at),
    field_clock: fieldClock,
    field_versions: JSON.stringify(versions),
  };
  if (changes.trashed !== undefined) patch.trashed_at = changes.trashed ? write.now : null;
  const updated = sameAuthority(note, await store.updateNote(db, note, patch));
  noteChanged(db, note.id);
  if (changes.title !== undefined || changes.content !== undefined) {
    await indexNote(db, updated, note);
    await recordRevision(db, updated, write.authorId, write.now);
  }
  return { note: updated, changed };
}

/** Stores a stored change that touched no NoteInput field, e.g. an attachment added (D-ATT-5). */
export async function bumpNoteVersion<N extends AuthorizedNote<'edit'>>(
  db: Db,
  note: N,
  now: number,
): Promise<N> {
  const updated = await store.updateNote(db, note, {
    version: note.version + 1,
    updated_at: Math.max(now, note.updated_at),
  });
  noteChanged(db, note.id);
  return sameAuthority(note, updated);
}

/**
 * Deletes notes for good, leaving a tombstone for everyone who could see them (D-SYNC-3).
 * Returns removed attachment rows; pass them to `notifyDeleted` after the commit.
 */
export async function deleteNotesForGood(
  db: Db,
  notes: readonly AuthorizedNote<'own'>[],
  now: number,
): Promise<AttachmentRow[]> {
  if (notes.length === 0) return [];
  await recordTombstones(db, await store.usersWithAccess(db, notes), now);
  const ids = notes.map((n) => n.id);
  // Read before the rows go: deleting the notes removes their attachment and tag rows by cascade.
  const attachments = await attachmentsOfNotes(db, ids);
  const tagIds = await tagIdsOfNotes(db, ids);
  await deleteSearchDocuments(
    db,
    notes.map((n) => n.doc_id),
  );
  await store.deleteNotes(db, ids);
  await deleteUnusedTags(db, tagIds);
  return attachments;
}
