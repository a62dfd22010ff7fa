import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { v5 as nameBasedUuid } from 'uuid';
import yazl from 'yazl';
import type { Actor } from '../../actor.js';
import { requireWriteScope } from '../../actor.js';
import type { Db } from '../../db/types.js';
import { AppError } from '../../errors.js';
import { PRIVATE_DIR_MODE } from '../../fileModes.js';
import { noteViewBatches } from '../../model/noteAnswers.js';
import type { ListedNote } from '../../model/notes.js';
import type { Note } from '../../shared/api/notes.js';
import type { ImportSummary } from '../../shared/api/transfer.js';
import { isNoteId } from '../../shared/noteIds.js';
import { MAX_FILE_BYTES } from '../attachments/images.js';
import type { AttachmentsService } from '../attachments/service.js';
import type { NotesService } from '../notes/service.js';
import {
  attachmentPath,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  exportedNote,
  markdownOf,
  markdownPath,
} from './exportFormat.js';
import {
  detectFormat,
  type ImportItem,
  problemWith,
  readItems,
  type SourceFiles,
  type Unreadable,
} from './sources.js';
import * as store from './store.js';
import { openZip, type ZipLimits } from './zip.js';

/** Largest archive POST /api/import takes (docs/api.md). */
export const MAX_IMPORT_BYTES = 256 * 1024 * 1024;

/**
 * At most this many notes are read from one import: elements of notes.json, Keep notes or
 * Markdown files, readable or not (docs/backup.md). What comes after is not read, and said so.
 */
export const MAX_IMPORT_NOTES = 50_000;
/** The summary lists this many of what it left out, and counts the rest (docs/backup.md). */
export const MAX_UNREADABLE_LISTED = 100;

/** Zip bomb limits of an import, from the API or the command (docs/api.md). */
export const IMPORT_LIMITS: ZipLimits = {
  maxEntries: 20_000,
  maxTotalBytes: 1024 * 1024 * 1024,
  maxRatio: 100,
};

/**
 * Notes an import writes at once. One at a time, each waited for its own COMMIT: on PostgreSQL a
 * WAL flush per note (2,000 Keep notes took 55 s at load 6). Several at once share COMMITs (group
 * commit on SQLite, concurrent WAL flushes on PostgreSQL); a few, so that memory (an image being
 * thumbnailed per note) and the pool stay bounded.
 */
const IMPORT_CONCURRENCY = 8;

/** Fixed namespace of imported notes' name-based ids (a random v4 uuid, chosen once). */
const IMPORT_NAMESPACE = '3b9c1f64-52d7-4e0a-a8f1-7c6d2e9b4a17';

interface TransferDeps {
  db: Db;
  notes: NotesService;
  attachments: AttachmentsService;
  /** Where uploaded archives are received (swept at start-up with the attachment uploads). */
  uploadDir: string;
}

/** Streams an uploaded archive into a file inside `directory` (the HTTP layer provides it). */
export type ReceiveArchive = (directory: string) => Promise<string>;

export function createTransferService(deps: TransferDeps) {
  const { db, notes, attachments } = deps;

  /**
   * The id an item gets, or null when the note is already there. An id the source gives (our
   * export) is kept when it is free, so export then import into a new server keeps ids; when it
   * belongs to another user's note (the export came from this server), the importing user gets
   * a name-based id of it instead, as does a given id that is not a UUID (`../x`, ``, a
   * 200,000-character one: src/shared/noteIds.ts). Notes from Keep or Markdown without an id get
   * a name-based uuid of the user and the source file, so importing the same archive again
   * finds them.
   */
  async function noteIdFor(userId: number, item: ImportItem): Promise<string | null> {
    const given = item.givenId?.toLowerCase();
    if (isNoteId(given)) {
      const owner = await store.ownerOfNote(db, given);
      if (owner === undefined) return given;
      if (owner === userId) return null;
    }
    const name = given !== undefined ? `${userId}/id/${given}` : `${userId}/source/${item.source}`;
    const derived = nameBasedUuid(name, IMPORT_NAMESPACE);
    return (await store.ownerOfNote(db, derived)) === undefined ? derived : null;
  }

  /** Adds one attachment through the attachments service (D-ATT-1..3); a refused file is reported. */
  async function importAttachment(
    actor: Actor,
    noteId: string,
    files: SourceFiles,
    attachment: ImportItem['attachments'][number],
  ): Promise<Unreadable | null> {
    const { source, filename } = attachment;
    if (!files.names.includes(source)) return { source, reason: 'the attachment is not in the archive' };
    if (files.size(source) > MAX_FILE_BYTES) return { source, reason: `larger than ${MAX_FILE_BYTES} bytes` };
    try {
      await attachments.add(actor, noteId, async (directory) => {
        const target = path.join(directory, 'file');
        return { file: { path: target, filename, ...(await files.extract(source, target)) } };
      });
      return null;
    } catch (err) {
      if (err instanceof AppError && err.statusCode < 500) return { source, reason: err.message };
      throw err;
    }
  }

  /** Stores one item: its note, then its attachments; counts what happened in `summary`. */
  async function importItem(actor: Actor, files: SourceFiles, item: ImportItem, summary: ImportSummary) {
    const problem = problemWith(item.values);
    if (problem) {
      leftOut(summary, { source: item.source, reason: problem });
      return;
    }
    const id = await noteIdFor(actor.userId, item);
    if (id === null) {
      summary.alreadyThere++;
      return;
    }
    try {
      await notes.create(
        actor,
        { ...item.values, id },
        { createdAt: item.createdAt, editedAt: item.editedAt },
      );
    } catch (err) {
      // Made by a concurrent import of the same source since noteIdFor looked.
      if (err instanceof AppError && err.code === 'note_exists') {
        summary.alreadyThere++;
        return;
      }
      throw err;
    }
    summary.imported++;
    for (const attachment of item.attachments) {
      const refused = await importAttachment(actor, id, files, attachment);
      if (refused) leftOut(summary, refused);
      else summary.attachments++;
    }
  }

  /**
   * Imports our export, a Google Keep Takeout or Markdown files into the actor's notes, a few
   * notes at a time (IMPORT_CONCURRENCY) through the notes and attachments services (tags, search
   * index and limits apply as for any create). Importing the same source again creates nothing
   * new. A failure (an outage) ends it once the notes in flight are done.
   */
  async function importFrom(actor: Actor, files: SourceFiles): Promise<ImportSummary> {
    requireWriteScope(actor);
    const format = detectFormat(files);
    const summary: ImportSummary = {
      format,
      imported: 0,
      alreadyThere: 0,
      attachments: 0,
      unreadable: [],
      unreadableCount: 0,
    };
    let read = 0;
    const inFlight = new Set<Promise<void>>();
    let failure: { error: unknown } | undefined;
    for await (const item of readItems(files, format)) {
      if (failure) break;
      if (++read > MAX_IMPORT_NOTES) {
        leftOut(summary, {
          source: item.source,
          reason: `the import stops at ${MAX_IMPORT_NOTES} notes: this and the rest were not read`,
        });
        break;
      }
      if ('reason' in item) {
        leftOut(summary, item);
        continue;
      }
      const task: Promise<void> = importItem(actor, files, item, summary)
        .catch((error) => {
          failure ??= { error };
        })
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
      if (inFlight.size >= IMPORT_CONCURRENCY) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    if (failure) throw failure.error;
    return summary;
  }

  return {
    importFrom,

    /**
     * POST /api/import: the archive is received into a work folder (after the scope check, so
     * a read-only key sends no upload for nothing), read with the zip bomb limits, imported.
     */
    async importArchive(actor: Actor, receive: ReceiveArchive): Promise<ImportSummary> {
      requireWriteScope(actor);
      await fs.mkdir(deps.uploadDir, { recursive: true, mode: PRIVATE_DIR_MODE });
      const workDir = await fs.mkdtemp(path.join(deps.uploadDir, 'import-'));
      try {
        const files = await openZip(await receive(workDir), IMPORT_LIMITS);
        try {
          return await importFrom(actor, files);
        } finally {
          files.close();
        }
      } finally {
        await fs.rm(workDir, { recursive: true, force: true });
      }
    },

    /**
     * The actor's own notes as our export zip, streamed: notes are read 500 at a time while the
     * zip is written, and each attachment file is opened only when its turn comes, so memory
     * stays bounded whatever the number of notes. Notes shared with the actor are not in it:
     * they belong to their owner, whose export has them.
     */
    async exportNotes(actor: Actor): Promise<Readable> {
      const notes = await store.ownedNotes(db, actor.userId);
      const zip = new yazl.ZipFile();
      zip.addReadStream(Readable.from(notesJson(actor, notes)), 'notes.json');
      const output = zip.outputStream as Readable;
      const fail = (err: unknown) => output.destroy(err as Error);
      addNoteFiles(zip, actor, notes).then(() => zip.end(), fail);
      zip.on('error', fail);
      return output;
    },
  };

  async function* notesJson(actor: Actor, notes: readonly ListedNote[]): AsyncGenerator<string> {
    const head = { format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: new Date().toISOString() };
    yield `${JSON.stringify(head).slice(0, -1)},"notes":[`;
    let first = true;
    for await (const batch of noteViewBatches(db, actor.userId, notes)) {
      for (const note of batch) {
        yield `${first ? '' : ','}\n${JSON.stringify(exportedNote(note))}`;
        first = false;
      }
    }
    yield '\n]}\n';
  }

  /**
   * Adds each note's Markdown file and attachments, a batch at a time: the next batch is read
   * only once the zip has started on this batch's last entry (the reader of the zip sets the pace).
   */
  async function addNoteFiles(zip: yazl.ZipFile, actor: Actor, notes: readonly ListedNote[]): Promise<void> {
    for await (const batch of noteViewBatches(db, actor.userId, notes)) {
      // Every note's promise is awaited: one the zip refuses fails this export, never the process.
      await Promise.all(batch.map((note) => addNote(zip, actor, note)));
    }
  }

  /** Resolves when the zip asks for the note's last entry; rejects when the zip refuses one. */
  function addNote(zip: yazl.ZipFile, actor: Actor, note: Note): Promise<void> {
    const mtime = new Date(note.updatedAt);
    return new Promise((resolve) => {
      const last = note.attachments.length - 1;
      zip.addReadStreamLazy(markdownPath(note), { mtime }, (callback) => {
        if (last < 0) resolve();
        callback(null, Readable.from([Buffer.from(markdownOf(note))]));
      });
      note.attachments.forEach((attachment, index) => {
        zip.addReadStreamLazy(attachmentPath(attachment), { mtime, compress: false }, (callback) => {
          if (index === last) resolve();
          attachments
            .find(actor, note.id, attachment.id, false)
            .then(attachments.open)
            .then(
              (found) => callback(null, found.stream),
              (err) => callback(err, undefined as never),
            );
        });
      });
    });
  }
}

/** Counts what an import left out, and lists it while the list is short. */
function leftOut(summary: ImportSummary, unreadable: Unreadable): void {
  summary.unreadableCount++;
  if (summary.unreadable.length < MAX_UNREADABLE_LISTED) summary.unreadable.push(unreadable);
}
