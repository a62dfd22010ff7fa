import type { Actor } from '../../actor.js';
import { type Clock, iso } from '../../clock.js';
import { randomToken } from '../../crypto.js';
import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import { type AttachmentRow, attachmentsByNote } from '../../model/attachments.js';
import { requireNoteAccess } from '../../model/noteAccess.js';
import type { NoteRow } from '../../model/notes.js';
import type { NoteColor } from '../../shared/colors.js';
import { attachmentOnNote, type StoredFile, storedFileOf } from '../attachments/service.js';
import type { SharedNote, ShareLink } from './schemas.js';
import * as store from './store.js';

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface SharingDeps {
  db: Db;
  clock: Clock;
}

/** A shared note as the public sees it, plus which attachments have a thumbnail (for the page). */
export interface SharedNoteView {
  note: SharedNote;
  thumbnails: ReadonlySet<string>;
}

function shareUrl(origin: string, token: string): string {
  return `${origin}/s/${token}`;
}

const shareNotFound = () => errors.shareNotFound();

/**
 * Owner-only, like collaborator management, but the interface answers a collaborator with 404
 * ("note not found or caller is not the owner", docs/interface.md#errors), where D-ERR-2 would
 * say 403: the interface wins.
 */
async function requireOwnedNote(db: Db, actor: Actor, noteId: string): Promise<NoteRow> {
  return (await requireNoteAccess(db, actor, noteId, 'own', { forbiddenAsNotFound: true })).note;
}

function publicView(note: NoteRow, attachments: readonly AttachmentRow[]): SharedNoteView {
  return {
    note: {
      title: note.title,
      content: note.content,
      checklistMode: note.checklist_mode === 1,
      color: note.color as NoteColor,
      // attachmentsByNote orders by createdAt, so the first one is the featured one (D-SHARE-3).
      attachments: attachments.map((a, index) => ({
        id: a.id,
        filename: a.filename,
        mimeType: a.mime_type,
        size: a.size,
        width: a.width,
        height: a.height,
        featured: index === 0,
        createdAt: iso(a.created_at),
      })),
      createdAt: iso(note.created_at),
      updatedAt: iso(note.updated_at),
    },
    thumbnails: new Set(attachments.filter((a) => a.thumbnail_path !== null).map((a) => a.id)),
  };
}

export function createSharingService({ db, clock }: SharingDeps) {
  /** The note a token publishes: unknown, revoked, deleted and trashed all read as 404 (D-SHARE-3). */
  async function sharedNoteRow(token: string): Promise<NoteRow> {
    const note = TOKEN_SHAPE.test(token) ? await store.findNoteByToken(db, token) : undefined;
    if (!note || note.trashed === 1) throw shareNotFound();
    return note;
  }

  return {
    /** Creates the note's link, or returns the one it has (idempotent). `origin` prefixes the url. */
    async share(actor: Actor, noteId: string, origin: string): Promise<ShareLink> {
      const token = await db.transaction().execute(async (trx) => {
        const note = await requireOwnedNote(trx, actor, noteId);
        const existing = await store.findLinkByNote(trx, note.id);
        if (existing) return existing.token;
        const created = randomToken();
        await store.insertLink(trx, { note_id: note.id, token: created, created_at: clock.now() });
        return created;
      });
      return { token, url: shareUrl(origin, token) };
    },

    /** Removes the link; the token is 404 from the next request on. No link is fine too (D-SHARE-3). */
    async revoke(actor: Actor, noteId: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const note = await requireOwnedNote(trx, actor, noteId);
        await store.deleteLink(trx, note.id);
      });
    },

    async sharedNote(token: string): Promise<SharedNoteView> {
      const note = await sharedNoteRow(token);
      const attachments = (await attachmentsByNote(db, [note.id])).get(note.id) ?? [];
      return publicView(note, attachments);
    },

    /** An image of the shared note, or its thumbnail; any other note's attachment is 404. */
    async sharedAttachment(token: string, attachmentId: string, thumbnail: boolean): Promise<StoredFile> {
      const note = await sharedNoteRow(token);
      return storedFileOf(await attachmentOnNote(db, note.id, attachmentId), thumbnail);
    },
  };
}

export type SharingService = ReturnType<typeof createSharingService>;
