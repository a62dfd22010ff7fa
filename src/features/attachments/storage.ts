import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { PRIVATE_DIR_MODE } from '../../fileModes.js';

/** What a stored object must be: put refuses bytes that differ (a local file changed underneath). */
export interface ExpectedBytes {
  size: number;
  /** SHA-256 (hex); omitted for bytes the server made itself (generated thumbnails). */
  sha256?: string;
}

/** An object in the store, for the start-up sweep. */
export interface StoredObject {
  key: string;
  /** Wall-clock ms of its write: the sweep leaves objects that may belong to an upload in flight. */
  storedAt: number;
}

/**
 * Where attachment bytes live (docs/decisions/0021-attachment-storage.md): a directory, or the
 * PostgreSQL database. Deliberately small so that an S3-compatible store can be added without
 * touching routes or the service. Keys are relative storage keys built from ids only
 * (`files/<id>`, `thumbnails/<id>.webp`), never from anything a client sent.
 */
export interface AttachmentStorage {
  /**
   * Stores a finished local file under `key`, streamed, replacing any object there; the object
   * is durable and readable once this resolves. Bytes that do not match `expected` are refused
   * and nothing is left under the key. The local file may be moved away (the directory store
   * renames it into place).
   */
  put(key: string, localFile: string, expected: ExpectedBytes): Promise<void>;
  /** The object's bytes as a stream with its size, or null when there is no such object. */
  get(key: string): Promise<{ stream: Readable; size: number } | null>;
  exists(key: string): Promise<boolean>;
  /** Removes objects; keys that do not exist are ignored. */
  delete(keys: readonly string[]): Promise<void>;
  /** Every object in the store, finished or not, for the start-up sweep. */
  list(): AsyncIterable<StoredObject>;
  /** Resolves when the store can be read and written (the health check); rejects saying why. */
  check(): Promise<void>;
}

/**
 * A local file's bytes in chunks of `chunkSize`, hashed on the way; the iteration fails at the end
 * when they do not match `expected`, so nothing built from them may be kept before it completes.
 */
export async function* verifiedChunks(
  localFile: string,
  expected: ExpectedBytes,
  chunkSize: number,
): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(localFile, { highWaterMark: chunkSize })) {
    size += chunk.length;
    hash.update(chunk);
    yield chunk as Buffer;
  }
  const sha256 = hash.digest('hex');
  if (size !== expected.size || (expected.sha256 !== undefined && sha256 !== expected.sha256)) {
    throw new Error(`${localFile} changed before it was stored (${size} bytes, sha256 ${sha256})`);
  }
}

/** Reads of a local file being verified. */
const READ_CHUNK_BYTES = 256 * 1024;

const KEY = /^[a-z]+\/[A-Za-z0-9-]+(\.[a-z]+)?$/;

/** Keys come from ids, but a bad key must never address a file outside a directory store's root. */
export function checkedKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
  return key;
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/** A directory store: DATA_DIR/attachments/<key>, or ATTACHMENTS_DIR/<key>. */
export class DirectoryStorage implements AttachmentStorage {
  constructor(readonly root: string) {}

  private pathOf(key: string): string {
    return path.join(this.root, checkedKey(key));
  }

  async put(key: string, localFile: string, expected: ExpectedBytes): Promise<void> {
    const target = this.pathOf(key);
    // Reading the file through is the check: it throws when the bytes are not the expected ones.
    for await (const _ of verifiedChunks(localFile, expected, READ_CHUNK_BYTES));
    const directory = path.dirname(target);
    // Files keep the mode they were received with (PRIVATE_FILE_MODE), through rename or copy.
    await fs.mkdir(directory, { recursive: true, mode: PRIVATE_DIR_MODE });
    // Flush the bytes before the rename, then the directory entry after it, so that a crash
    // leaves either no file or the whole file under its final name (D-ATT-3).
    await syncFile(localFile);
    try {
      await fs.rename(localFile, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      // The upload area is on another file system: copy next to the target, then rename.
      const staging = `${target}.partial`;
      await fs.copyFile(localFile, staging, constants.COPYFILE_EXCL);
      await syncFile(staging);
      await fs.rename(staging, target);
    }
    await syncFile(directory);
  }

  async get(key: string): Promise<{ stream: Readable; size: number } | null> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.pathOf(key), 'r');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    try {
      const { size } = await handle.stat();
      return { stream: createReadStream('', { fd: handle }), size };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    return fs.access(this.pathOf(key)).then(
      () => true,
      (err) => {
        if (isMissing(err)) return false;
        throw err;
      },
    );
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) await fs.rm(this.pathOf(key), { force: true });
  }

  async check(): Promise<void> {
    await fs.mkdir(this.root, { recursive: true, mode: PRIVATE_DIR_MODE });
    await fs.access(this.root, constants.R_OK | constants.W_OK);
  }

  async *list(): AsyncIterable<StoredObject> {
    let folders: string[];
    try {
      folders = await fs.readdir(this.root);
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    for (const folder of folders) {
      const entries = await fs.readdir(path.join(this.root, folder), { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const key = `${folder}/${entry.name}`;
        // Only names this store could have written; anything else in the folder is left alone.
        if (!entry.isFile() || !KEY.test(key)) continue;
        const stats = await fs.stat(this.pathOf(key)).catch(() => null);
        if (stats) yield { key, storedAt: stats.mtimeMs };
      }
    }
  }
}

async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
