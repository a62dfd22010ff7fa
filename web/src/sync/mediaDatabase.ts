import { type DBSchema, type IDBPDatabase, wrap } from 'idb';

/**
 * The device's images, one database per user (`keepsake-media-u<userId>`), apart from the notes
 * database so the engine's schema stays its own: images waiting to be uploaded, and the cached
 * thumbnails and originals of attachments already on the server.
 */

/** An image added on this device that has not landed on the server yet. */
export interface QueuedUpload {
  /** Made on the device; names the image on screen until the server gives it its own id. */
  id: string;
  noteId: string;
  file: Blob;
  filename: string;
  /** A WebP of at most 512 px a side, or null when the browser could not make one. */
  thumbnail: Blob | null;
  addedAt: number;
  /** Failed attempts so far (the backoff grows with them). */
  attempts: number;
  /** Unix ms before which no attempt is made. */
  notBefore: number;
  /** Set once the server has it: shown until a pull brings the note with this attachment. */
  attachmentId?: string;
  width?: number;
  height?: number;
}

export type CachedKind = 'thumbnail' | 'original';

export interface CachedBlob {
  /** `<kind>:<attachmentId>`. */
  key: string;
  kind: CachedKind;
  blob: Blob;
  size: number;
  usedAt: number;
}

interface MediaSchema extends DBSchema {
  uploads: { key: string; value: QueuedUpload; indexes: { noteId: string } };
  blobs: { key: string; value: CachedBlob; indexes: { usedAt: number } };
}

export type MediaDatabase = IDBPDatabase<MediaSchema>;

export const mediaDatabaseName = (userId: string) => `keepsake-media-u${userId}`;

export function openMediaDatabase(factory: IDBFactory, userId: string): Promise<MediaDatabase> {
  const request = factory.open(mediaDatabaseName(userId), 1);
  request.addEventListener('upgradeneeded', () => {
    const db = request.result;
    db.createObjectStore('uploads', { keyPath: 'id' }).createIndex('noteId', 'noteId');
    db.createObjectStore('blobs', { keyPath: 'key' }).createIndex('usedAt', 'usedAt');
  });
  return (wrap(request) as unknown as Promise<MediaDatabase>).then((db) => {
    // Sign-out in another tab deletes the database: let it.
    db.addEventListener('versionchange', () => db.close());
    return db;
  });
}

export function deleteMediaDatabase(factory: IDBFactory, userId: string): Promise<void> {
  return (wrap(factory.deleteDatabase(mediaDatabaseName(userId))) as unknown as Promise<unknown>).then(
    () => undefined,
  );
}

/**
 * Another person signs in on this browser: the user's images waiting for upload stay (hidden
 * until they sign in again), the cached files of their notes go; with nothing waiting, the
 * database goes.
 */
export async function keepOnlyQueuedUploads(factory: IDBFactory, userId: string): Promise<void> {
  const db = await openMediaDatabase(factory, userId);
  let waiting = 0;
  try {
    waiting = await db.count('uploads');
    await db.clear('blobs');
  } finally {
    db.close();
  }
  if (waiting === 0) await deleteMediaDatabase(factory, userId);
}
