import type { Selectable } from 'kysely';
import { inJsonList } from '../db/dialect.js';
import type { AttachmentsTable } from '../db/schema.js';
import type { Db } from '../db/types.js';

export type AttachmentRow = Selectable<AttachmentsTable>;

export async function insertAttachment(db: Db, row: AttachmentRow): Promise<AttachmentRow> {
  return db.insertInto('attachments').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The attachment only if it belongs to that note (D-ATT-4: another note's attachment is 404). */
export async function findAttachment(
  db: Db,
  noteId: string,
  attachmentId: string,
): Promise<AttachmentRow | undefined> {
  return db
    .selectFrom('attachments')
    .selectAll()
    .where('id', '=', attachmentId)
    .where('note_id', '=', noteId)
    .executeTakeFirst();
}

export async function deleteAttachment(db: Db, attachmentId: string): Promise<void> {
  await db.deleteFrom('attachments').where('id', '=', attachmentId).execute();
}

/** Every attachment's id and thumbnail key, for the start-up orphan sweep. */
export async function allAttachmentKeys(db: Db): Promise<Pick<AttachmentRow, 'id' | 'thumbnail_path'>[]> {
  return db.selectFrom('attachments').select(['id', 'thumbnail_path']).execute();
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

/** The attachment rows of notes being deleted, whose files go once the deletion has committed. */
export async function attachmentsOfNotes(db: Db, noteIds: readonly string[]): Promise<AttachmentRow[]> {
  return db.selectFrom('attachments').selectAll().where('note_id', 'in', inJsonList(noteIds)).execute();
}
