import { signal } from '@preact/signals';
import { Trash2 } from 'lucide-preact';
import { useEffect, useRef } from 'preact/hooks';
import { askFirst } from '../app/confirm.js';
import {
  deleteAttachment,
  queuedImages,
  removeQueuedImage,
  useAttachmentUrl,
  useBlobUrl,
} from '../app/media.js';
import { engine } from '../app/state.js';
import { imageBoxRatio } from '../model/imageBox.js';
import type { LocalNote, ServerAttachment } from '../sync/index.js';
import type { QueuedUpload } from '../sync/mediaDatabase.js';
import { IconButton } from './IconButton.js';

/**
 * A note's images above its text: thumbnails on a card, larger with "Delete image" in the editor.
 * Each box is sized before its image loads, so nothing moves when it does: by the image's own
 * ratio (the server's width and height, or the file's on this device), else 4:3 (the
 * stylesheet's) for an image stored before the server measured them.
 */
export function NoteImages({ note, large = false }: { note: LocalNote; large?: boolean }) {
  const queued = queuedImages(note);
  if (note.attachments.length === 0 && queued.length === 0) return null;
  return (
    <div class={`note-images${large ? ' large' : ''}`}>
      {note.attachments.map((attachment) => (
        <ServerImage key={attachment.id} note={note} attachment={attachment} large={large} />
      ))}
      {queued.map((upload) => (
        <QueuedImage key={upload.id} upload={upload} large={large} />
      ))}
    </div>
  );
}

function boxStyle(width: number | null | undefined, height: number | null | undefined) {
  const ratio = imageBoxRatio(width, height);
  return ratio === null ? undefined : { aspectRatio: String(ratio) };
}

function ServerImage({
  note,
  attachment,
  large,
}: {
  note: LocalNote;
  attachment: ServerAttachment;
  large: boolean;
}) {
  const url = useAttachmentUrl(note.id, attachment.id, 'thumbnail');
  const image = url ? <img src={url} alt={attachment.filename} /> : <span class="image-placeholder" />;
  return (
    <figure class="note-image" style={boxStyle(attachment.width, attachment.height)}>
      {large ? (
        // On a card a click opens the editor; in the editor it opens the viewer.
        <button
          type="button"
          class="image-button"
          aria-label={`View ${attachment.filename}`}
          onClick={() => (viewing.value = { noteId: note.id, attachment })}
        >
          {image}
        </button>
      ) : (
        image
      )}
      {large && !note.trashed && (
        <IconButton
          label="Delete image"
          class="image-delete"
          onClick={() =>
            askFirst({
              title: 'Delete image?',
              text: attachment.filename,
              confirm: 'Delete',
              action: () => {
                const current = engine.value;
                if (current) return deleteAttachment(current, note.id, attachment.id);
              },
            })
          }
        >
          <Trash2 size={16} />
        </IconButton>
      )}
    </figure>
  );
}

function QueuedImage({ upload, large }: { upload: QueuedUpload; large: boolean }) {
  const url = useBlobUrl(upload.thumbnail ?? upload.file);
  return (
    <figure class="note-image queued" style={boxStyle(upload.width, upload.height)}>
      {url && <img src={url} alt={upload.filename} width={upload.width} height={upload.height} />}
      {upload.attachmentId === undefined && <span class="visually-hidden">Not uploaded yet</span>}
      {large && upload.attachmentId === undefined && (
        <IconButton
          label="Delete image"
          class="image-delete"
          onClick={() =>
            askFirst({
              title: 'Delete image?',
              text: upload.filename,
              confirm: 'Delete',
              action: () => removeQueuedImage(upload.id),
            })
          }
        >
          <Trash2 size={16} />
        </IconButton>
      )}
    </figure>
  );
}

const viewing = signal<{ noteId: string; attachment: ServerAttachment } | null>(null);

/** The original of an image, in a dialog; kept on the device once viewed. */
export function ImageViewer() {
  const current = viewing.value;
  if (!current) return null;
  return <ViewerDialog key={current.attachment.id} noteId={current.noteId} attachment={current.attachment} />;
}

function ViewerDialog({ noteId, attachment }: { noteId: string; attachment: ServerAttachment }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const url = useAttachmentUrl(noteId, attachment.id, 'original');
  useEffect(() => dialog.current?.showModal(), []);
  const close = () => (viewing.value = null);
  return (
    <dialog
      ref={dialog}
      class="viewer"
      aria-label={attachment.filename}
      onCancel={(event) => {
        event.preventDefault();
        close();
      }}
    >
      {url ? <img src={url} alt={attachment.filename} /> : <p>Loading…</p>}
      <div class="toolbar">
        <span class="spacer" />
        <button type="button" class="text-button" onClick={close}>
          Close
        </button>
      </div>
    </dialog>
  );
}
