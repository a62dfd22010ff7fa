import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Actor } from '../../actor.js';
import type { Clock } from '../../clock.js';
import { transaction } from '../../db/noteChanges.js';
import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../fileModes.js';
import type { Logger } from '../../logger.js';
import * as store from '../../model/attachments.js';
import { type AttachmentRow, attachmentsByNote } from '../../model/attachments.js';
import { requireNoteAccess } from '../../model/noteAccess.js';
import { attachmentView } from '../../model/noteAnswers.js';
import { bumpNoteVersion } from '../../model/noteWrites.js';
import type { Attachment } from '../../shared/api/notes.js';
import type { StorageQuota } from '../storage/service.js';
import { sanitizeFilename, thumbnailFilename } from './filenames.js';
import { checkClientThumbnail, readImage } from './images.js';
import type { AttachmentStorage } from './storage.js';

/** A part of an upload, already streamed to a temporary file. */
export interface ReceivedFile {
  path: string;
  /** The name the client gave; only shown, after sanitising. */
  filename: string;
  size: number;
  sha256: string;
}

export interface ReceivedUpload {
  file?: ReceivedFile;
  thumbnail?: ReceivedFile;
}

/** Streams the request's parts into files inside `directory` (the HTTP layer provides it). */
export type ReceiveUpload = (directory: string) => Promise<ReceivedUpload>;

/** A stored file ready to be sent: what the download headers need, and how to read it. */
export interface StoredFile {
  key: string;
  mimeType: string;
  filename: string;
  etag: string;
}

export interface AttachmentsDeps {
  db: Db;
  clock: Clock;
  storage: AttachmentStorage;
  /** Where uploads are received before they are checked and moved into storage. */
  uploadDir: string;
  /** Images and client thumbnails with more pixels are refused before decoding. */
  maxImagePixels: number;
  quota: StorageQuota;
  log: Logger;
}

/**
 * An object without a row is an orphan only once it is this old: between an upload's put and its
 * commit there are seconds, and another server process sharing the store may be in that window.
 */
export const SWEEP_GRACE_MS = 60 * 60 * 1000;

const fileKey = (attachmentId: string) => `files/${attachmentId}`;
const thumbnailKey = (attachmentId: string) => `thumbnails/${attachmentId}.webp`; // D-ATT-2

/** The client's thumbnail when it passes D-ATT-2, else the one made from the image, as a file. */
async function thumbnailFor(
  sent: ReceivedFile | undefined,
  generated: Buffer,
  workDir: string,
  maxPixels: number,
): Promise<{ path: string; size: number; sha256?: string }> {
  if (sent) {
    await checkClientThumbnail(sent.path, sent.size, maxPixels);
    return sent;
  }
  const file = path.join(workDir, 'thumbnail.webp');
  await fs.writeFile(file, generated, { mode: PRIVATE_FILE_MODE });
  return { path: file, size: generated.length };
}

/** Every storage key an attachment row owns. */
export function keysOf(row: Pick<AttachmentRow, 'id' | 'thumbnail_path'>): string[] {
  return row.thumbnail_path ? [fileKey(row.id), row.thumbnail_path] : [fileKey(row.id)];
}

/**
 * The attachment if it is on that note (the caller has checked access to the note), else 404:
 * another note's attachment is 404 too (D-ATT-4). Used by note owners' and public share routes.
 */
export async function attachmentOnNote(db: Db, noteId: string, attachmentId: string): Promise<AttachmentRow> {
  const row = await store.findAttachment(db, noteId, attachmentId.toLowerCase());
  if (!row) throw errors.attachmentNotFound();
  return row;
}

/** An attachment's file, or its thumbnail (404 when it has none), as `sendStoredFile` sends it. */
export function storedFileOf(row: AttachmentRow, thumbnail: boolean): StoredFile {
  if (!thumbnail) {
    return { key: fileKey(row.id), mimeType: row.mime_type, filename: row.filename, etag: `"${row.sha256}"` };
  }
  if (!row.thumbnail_path) throw errors.thumbnailNotFound();
  return {
    key: row.thumbnail_path,
    mimeType: 'image/webp',
    filename: thumbnailFilename(row.filename),
    // A thumbnail never changes for its attachment, so the file's hash names it too.
    etag: `"${row.sha256}-thumbnail"`,
  };
}

export function createAttachmentsService(deps: AttachmentsDeps) {
  const { db, clock, storage, log } = deps;

  /** Deletes stored files; a failure only leaves orphans, which the start-up sweep removes. */
  async function deleteFiles(keys: string[]): Promise<void> {
    try {
      await storage.delete(keys);
    } catch (err) {
      log.warn({ err, keys }, 'could not delete attachment files; the start-up sweep will');
    }
  }

  async function findOnNote(actor: Actor, noteId: string, attachmentId: string): Promise<AttachmentRow> {
    const { note } = await requireNoteAccess(db, actor, noteId, 'read');
    return attachmentOnNote(db, note.id, attachmentId);
  }

  return {
    async list(actor: Actor, noteId: string): Promise<Attachment[]> {
      const { note } = await requireNoteAccess(db, actor, noteId, 'read');
      const byNote = await attachmentsByNote(db, [note.id]);
      return (byNote.get(note.id) ?? []).map(attachmentView);
    },

    /**
     * Adds an image to a note (D-ATT-1..3). Access is checked before the body is read. The
     * files are moved into storage first and the row is committed after, so a crash leaves at
     * most files without a row, which the start-up sweep removes; never a row without a file.
     */
    async add(actor: Actor, noteId: string, receive: ReceiveUpload): Promise<Attachment> {
      const { note: target } = await requireNoteAccess(db, actor, noteId, 'edit');
      // mkdtemp makes the work directory 0700 itself.
      await fs.mkdir(deps.uploadDir, { recursive: true, mode: PRIVATE_DIR_MODE });
      const workDir = await fs.mkdtemp(path.join(deps.uploadDir, 'upload-'));
      try {
        const { file, thumbnail } = await receive(workDir);
        if (!file) throw errors.invalidFile('The multipart field `file` is missing');
        // The quota is enforced when the row is written; this spares the decode of a refused upload.
        await deps.quota.requireRoom(db, target.owner_id, file.size + (thumbnail?.size ?? 0));
        const image = await readImage(file.path, deps.maxImagePixels);
        const thumbnailFile = await thumbnailFor(thumbnail, image.thumbnail, workDir, deps.maxImagePixels);

        const id = randomUUID();
        const keys = [fileKey(id), thumbnailKey(id)];
        try {
          await storage.put(fileKey(id), file.path, file);
          await storage.put(thumbnailKey(id), thumbnailFile.path, thumbnailFile);
          const row = await transaction(db, async (trx) => {
            // Again inside the transaction: the note may have gone while the body arrived.
            const { note } = await requireNoteAccess(trx, actor, noteId, 'edit');
            const now = clock.now();
            const inserted = await store.insertAttachment(trx, {
              id,
              note_id: note.id,
              filename: sanitizeFilename(file.filename, image.mimeType),
              mime_type: image.mimeType,
              size: file.size,
              thumbnail_path: thumbnailKey(id),
              created_at: now,
              sha256: file.sha256,
              thumbnail_size: thumbnailFile.size,
              width: image.width,
              height: image.height,
            });
            await bumpNoteVersion(trx, note, now); // D-NOTE-3, D-ATT-5
            return inserted;
          });
          return attachmentView(row);
        } catch (err) {
          await deleteFiles(keys);
          throw err;
        }
      } finally {
        await fs.rm(workDir, { recursive: true, force: true });
      }
    },

    /** The file or its thumbnail (D-ATT-4); 404 when either is not on that note. */
    async find(actor: Actor, noteId: string, attachmentId: string, thumbnail: boolean): Promise<StoredFile> {
      return storedFileOf(await findOnNote(actor, noteId, attachmentId), thumbnail);
    },

    /** Opens a stored file; a row whose file has gone (see sweepOrphans) answers 404. */
    async open(file: StoredFile): Promise<{ stream: Readable; size: number }> {
      const found = await storage.get(file.key);
      if (!found) throw errors.attachmentFileMissing();
      return found;
    },

    /** Removes one attachment (D-ATT-5): the row and a version bump in one transaction, then the files. */
    async remove(actor: Actor, noteId: string, attachmentId: string): Promise<void> {
      const row = await transaction(db, async (trx) => {
        const { note } = await requireNoteAccess(trx, actor, noteId, 'edit');
        const found = await attachmentOnNote(trx, note.id, attachmentId);
        await store.deleteAttachment(trx, found.id);
        await bumpNoteVersion(trx, note, clock.now());
        return found;
      });
      await deleteFiles(keysOf(row));
    },

    /** The notes service's `notesDeleted` listener: a deleted note's files go too, by any path (D-ATT-5). */
    async deleteFilesOf(rows: readonly AttachmentRow[]): Promise<void> {
      await deleteFiles(rows.flatMap(keysOf));
    },

    /**
     * Start-up sweep (D-ATT-3), run before this server accepts requests. Other processes may
     * share the store and have uploads in flight, so only objects older than SWEEP_GRACE_MS
     * count as orphans. Stored files without a row (a crash between the move and the commit, or a failed
     * delete) are deleted, as are leftover uploads. Rows whose files are missing are kept and
     * logged: a missing file more likely means an unmounted volume or a partial restore than
     * a real deletion, and deleting the rows would make that loss permanent.
     */
    async sweepOrphans(): Promise<{ deletedFiles: number; missingFiles: string[] }> {
      await fs.rm(deps.uploadDir, { recursive: true, force: true });
      const expected = new Set((await store.allAttachmentKeys(db)).flatMap(keysOf));
      const orphans: string[] = [];
      const settled = Date.now() - SWEEP_GRACE_MS;
      for await (const { key, storedAt } of storage.list()) {
        if (!expected.delete(key) && storedAt < settled) orphans.push(key);
      }
      await storage.delete(orphans);
      const missingFiles = [...expected];
      if (missingFiles.length > 0) {
        log.warn(
          { keys: missingFiles.slice(0, 100), count: missingFiles.length },
          'attachment files are missing',
        );
      }
      return { deletedFiles: orphans.length, missingFiles };
    },

    /** For the health check: the file store can be read and written. */
    checkStorage: () => storage.check(),
  };
}

export type AttachmentsService = ReturnType<typeof createAttachmentsService>;
