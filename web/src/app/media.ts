/**
 * The signed-in person's images: the upload queue and the file cache (web/src/sync/uploads.ts,
 * mediaCache.ts), wired to the sync engine, and what the components ask of them.
 */
import { signal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { readImage } from '../media/thumbnail.js';
import type { LocalNote, SyncEngine } from '../sync/index.js';
import { MediaCache } from '../sync/mediaCache.js';
import { type MediaDatabase, openMediaDatabase, type QueuedUpload } from '../sync/mediaDatabase.js';
import { UploadQueue } from '../sync/uploads.js';
import { showSnackbar } from './state.js';

interface Media {
  db: MediaDatabase;
  queue: UploadQueue;
  cache: MediaCache;
  detach: () => void;
}

/**
 * A signal, not a plain variable: the notes show before the media database opens (it must not
 * delay the first cards), and the images on them ask for their files again once it has.
 */
const media = signal<Media | null>(null);
/** Settles when the media database opening now is open (or failed): images added meanwhile wait. */
let opening: Promise<void> = Promise.resolve();
/** Bumped when the queue changes: components re-read `queuedImages`. */
const mediaRevision = signal(0);

export function openMedia(engine: SyncEngine): Promise<void> {
  opening = openMediaOf(engine);
  return opening;
}

async function openMediaOf(engine: SyncEngine): Promise<void> {
  detachMedia();
  const db = await openMediaDatabase(indexedDB, engine.userId);
  const cache = new MediaCache({ db, baseUrl: '' });
  const queue = await UploadQueue.open({
    db,
    baseUrl: '',
    onServer: (noteId) => (engine.notes().get(noteId)?.version ?? 0) > 0,
    onChange: () => mediaRevision.value++,
    onLanded: (upload, attachment) => {
      // The bytes are here already: the card and the viewer need not download them again.
      void cache.put(attachment.id, 'original', upload.file);
      if (upload.thumbnail) void cache.put(attachment.id, 'thumbnail', upload.thumbnail);
      void engine.syncNow();
    },
    onRefused: (upload, message) => showSnackbar(`Image "${upload.filename}" was not added: ${message}`),
  });
  const retry = () => void queue.retryNow();
  const unsubscribe = engine.subscribe((event) => {
    if (event.notes) void queue.settle((noteId) => engine.notes().get(noteId)?.attachments);
    // A sync went through: a note made here may have reached the server, or the server is back.
    if (event.status && engine.status().phase === 'idle') retry();
  });
  addEventListener('online', retry);
  media.value = {
    db,
    queue,
    cache,
    detach: () => {
      unsubscribe();
      removeEventListener('online', retry);
      queue.close();
      db.close();
    },
  };
  mediaRevision.value++;
  void queue.run();
}

function detachMedia(): void {
  media.peek()?.detach();
  media.value = null;
}

export async function closeMedia(): Promise<void> {
  // A database still opening is attached once it opens: closing before that would leave it open
  // (and block its deletion when the account's data is removed).
  await opening.catch(() => undefined);
  detachMedia();
}

/** The note's images still on the device only (a landed one shows until the note lists it). */
export function queuedImages(note: LocalNote): QueuedUpload[] {
  mediaRevision.value;
  const listed = new Set(note.attachments.map((attachment) => attachment.id));
  return media.value?.queue.forNote(note.id).filter((upload) => !listed.has(upload.attachmentId ?? '')) ?? [];
}

/** "Delete image" of an image on the server: needs the server (there is no offline queue for it). */
export async function deleteAttachment(engine: SyncEngine, noteId: string, attachmentId: string) {
  const path = `/api/notes/${encodeURIComponent(noteId)}/attachments?attachmentId=${encodeURIComponent(attachmentId)}`;
  const response = await fetch(path, { method: 'DELETE' }).catch(() => null);
  if (!response?.ok && response?.status !== 404) {
    showSnackbar('Deleting an image needs the server: try again when you are online');
    return;
  }
  await engine.syncNow();
}

/** Queues every image among `files` for the note; other files are named in the snackbar. */
export async function addImages(noteId: string, files: Iterable<File>): Promise<void> {
  await opening.catch(() => undefined);
  const current = media.peek();
  if (!current) return;
  for (const file of files) {
    const facts = file.type.startsWith('image/') ? await readImage(file) : null;
    if (!facts) {
      showSnackbar(`"${file.name}" is not an image this browser can show`);
      continue;
    }
    await current.queue.add({
      noteId,
      file,
      filename: file.name || 'image',
      thumbnail: facts.thumbnail,
      width: facts.width,
      height: facts.height,
    });
  }
}

export function removeQueuedImage(id: string): Promise<void> {
  return media.peek()?.queue.remove(id) ?? Promise.resolve();
}

/** The image files among a drop's or a paste's items. */
export function imageFiles(data: DataTransfer | null): File[] {
  return [...(data?.files ?? [])].filter((file) => file.type.startsWith('image/'));
}

/** An object URL for a cached or downloaded file, revoked when the component goes. */
export function useAttachmentUrl(noteId: string, attachmentId: string, kind: 'thumbnail' | 'original') {
  const [url, setUrl] = useState<string | null>(null);
  const cache = media.value?.cache;
  useEffect(() => {
    let made: string | null = null;
    let live = true;
    void cache?.get(noteId, attachmentId, kind).then((blob) => {
      if (!live || !blob) return;
      made = URL.createObjectURL(blob);
      setUrl(made);
    });
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [cache, noteId, attachmentId, kind]);
  return url;
}

/** An object URL for a Blob on the device (a queued image), revoked when the component goes. */
export function useBlobUrl(blob: Blob) {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    const made = URL.createObjectURL(blob);
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [blob]);
  return url;
}
