import type { Attachment, Note } from '../../shared/api/notes.js';
import { withFrontMatter } from './frontMatter.js';

/**
 * Our export zip (docs/backup.md): `notes.json` (what import reads back, losslessly), one
 * Markdown file per note under `notes/` for people and other apps, and the attachments under
 * `attachments/<note id>/<attachment id>/<filename>`.
 */
export const EXPORT_FORMAT = 'keepsake-notes-export';
export const EXPORT_VERSION = 1;

export interface ExportedAttachment {
  id: string;
  filename: string;
  mimeType: string;
  size: number;
  createdAt: string;
  /** The file's entry in the zip. */
  path: string;
}

export interface ExportedNote {
  id: string;
  title: string;
  content: string;
  color: Note['color'];
  pinned: boolean;
  archived: boolean;
  trashed: boolean;
  checklistMode: boolean;
  sortOrder: number;
  createdAt: string;
  updatedAt: string;
  tags: string[];
  attachments: ExportedAttachment[];
}

export const attachmentPath = (attachment: Attachment) =>
  `attachments/${attachment.noteId}/${attachment.id}/${attachment.filename}`;

export function exportedNote(note: Note): ExportedNote {
  return {
    id: note.id,
    title: note.title,
    content: note.content,
    color: note.color,
    pinned: note.pinned,
    archived: note.archived,
    trashed: note.trashed,
    checklistMode: note.checklistMode,
    sortOrder: note.sortOrder,
    createdAt: note.createdAt,
    updatedAt: note.updatedAt,
    tags: note.tags,
    attachments: note.attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      mimeType: a.mimeType,
      size: a.size,
      createdAt: a.createdAt,
      path: attachmentPath(a),
    })),
  };
}

/** Characters that file systems (or zip tools) refuse or treat as paths. */
const UNSAFE_IN_NAMES = /[\p{Cc}/\\:*?"<>|]+/gu;

/** `notes/<title> (<first 8 of the id>).md`: readable, and unique through the id. */
export function markdownPath(note: Note): string {
  const title = Array.from(note.title.replace(UNSAFE_IN_NAMES, '-').trim()).slice(0, 80).join('').trim();
  return `notes/${title.replace(/^\.+/, '') || 'Untitled'} (${note.id.slice(0, 8)}).md`;
}

/** The note as Markdown with YAML front matter; attachments are listed relative to the file. */
export function markdownOf(note: Note): string {
  return withFrontMatter(
    {
      title: note.title,
      color: note.color,
      pinned: note.pinned,
      archived: note.archived,
      trashed: note.trashed,
      checklistMode: note.checklistMode,
      createdAt: note.createdAt,
      updatedAt: note.updatedAt,
      tags: note.tags,
      id: note.id,
      ...(note.attachments.length > 0
        ? { attachments: note.attachments.map((a) => `../${attachmentPath(a)}`) }
        : {}),
    },
    note.content,
  );
}
