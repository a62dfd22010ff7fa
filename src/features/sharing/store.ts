import type { Selectable } from 'kysely';
import type { ShareLinksTable } from '../../db/schema.js';
import type { Db } from '../../db/types.js';
import type { NoteRow } from '../../model/notes.js';

export type ShareLinkRow = Selectable<ShareLinksTable>;

export async function findLinkByNote(db: Db, noteId: string): Promise<ShareLinkRow | undefined> {
  return db.selectFrom('share_links').selectAll().where('note_id', '=', noteId).executeTakeFirst();
}

export async function insertLink(db: Db, link: ShareLinkRow): Promise<void> {
  await db.insertInto('share_links').values(link).execute();
}

export async function deleteLink(db: Db, noteId: string): Promise<void> {
  await db.deleteFrom('share_links').where('note_id', '=', noteId).execute();
}

/** The note behind a token, whatever its state; one indexed lookup (share_links.token is unique). */
export async function findNoteByToken(db: Db, token: string): Promise<NoteRow | undefined> {
  return db
    .selectFrom('share_links as s')
    .innerJoin('notes as n', 'n.id', 's.note_id')
    .selectAll('n')
    .where('s.token', '=', token)
    .executeTakeFirst();
}
