import type { Db } from '../../db/connection.js';
import type { AttachmentRow } from '../notes/store.js';

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
