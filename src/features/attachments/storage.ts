import { constants, createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { PRIVATE_DIR_MODE } from '../../fileModes.js';

/**
 * Where attachment bytes live. Deliberately small (put, get, delete, list) so that an
 * S3-compatible store can replace the local disk without touching routes or the service.
 * Keys are relative storage keys built from ids only (`files/<id>`, `thumbnails/<id>.webp`),
 * never from anything a client sent.
 */
export interface AttachmentStorage {
  /** Moves a finished local file into the store under `key`; the object is durable once this resolves. */
  put(key: string, localFile: string): Promise<void>;
  /** The object's bytes as a stream with its size, or null when there is no such object. */
  get(key: string): Promise<{ stream: Readable; size: number } | null>;
  /** Removes objects; keys that do not exist are ignored. */
  delete(keys: readonly string[]): Promise<void>;
  /** Every key in the store, for the start-up sweep that compares them with the database. */
  list(): AsyncIterable<string>;
  /** Resolves when the store can be read and written (the health check); rejects saying why. */
  check(): Promise<void>;
}

const KEY = /^[a-z]+\/[A-Za-z0-9-]+(\.[a-z]+)?$/;

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/** The local-disk store: DATA_DIR/attachments/<key>. */
export class LocalDiskStorage implements AttachmentStorage {
  constructor(readonly root: string) {}

  private pathOf(key: string): string {
    // Keys come from ids, but a bad key must never address a file outside the root.
    if (!KEY.test(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
    return path.join(this.root, key);
  }

  async put(key: string, localFile: string): Promise<void> {
    const target = this.pathOf(key);
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

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) await fs.rm(this.pathOf(key), { force: true });
  }

  async check(): Promise<void> {
    await fs.mkdir(this.root, { recursive: true });
    await fs.access(this.root, constants.R_OK | constants.W_OK);
  }

  async *list(): AsyncIterable<string> {
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
        if (entry.isFile() && KEY.test(key)) yield key;
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
