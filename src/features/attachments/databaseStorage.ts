import { Readable } from 'node:stream';
import { inJsonList } from '../../db/dialect.js';
import type { Db } from '../../db/types.js';
import type { AttachmentStorage, ExpectedBytes, StoredObject } from './storage.js';
import { checkedKey, verifiedChunks } from './storage.js';

/** Bytes per attachment_chunks row (docs/decisions/0021-attachment-storage.md). */
export const CHUNK_BYTES = 256 * 1024;

/**
 * The PostgreSQL store (migration 0010): an attachment_objects row per object and its bytes in
 * attachment_chunks rows. Each statement commits on its own, outside the write lock every
 * transaction takes (db/postgres.ts), so a slow upload never holds up other writers; an object
 * becomes readable only when its last chunk is in and it is marked complete. At most one chunk
 * of a file is in this process's memory at a time, whichever way it goes.
 */
export class DatabaseStorage implements AttachmentStorage {
  constructor(private readonly db: Db) {}

  async put(key: string, localFile: string, expected: ExpectedBytes): Promise<void> {
    // Replacing (a migration run again) starts from nothing: the old chunks go with their row.
    await this.delete([checkedKey(key)]);
    await this.db
      .insertInto('attachment_objects')
      .values({ key, size: expected.size, complete: false, stored_at: Date.now() })
      .execute();
    try {
      let seq = 0;
      for await (const data of verifiedChunks(localFile, expected, CHUNK_BYTES)) {
        await this.db.insertInto('attachment_chunks').values({ key, seq, data }).execute();
        seq += 1;
      }
      await this.db
        .updateTable('attachment_objects')
        .set({ complete: true })
        .where('key', '=', key)
        .execute();
    } catch (err) {
      await this.delete([key]);
      throw err;
    }
  }

  async get(key: string): Promise<{ stream: Readable; size: number } | null> {
    const object = await this.completeObject(key);
    if (!object) return null;
    return {
      stream: Readable.from(this.chunksOf(key, object.size), { objectMode: false }),
      size: object.size,
    };
  }

  /**
   * One chunk per query, asked for only when the reader wants more (the stream's backpressure).
   * An object deleted while it is read fails the stream rather than ending it short.
   */
  private async *chunksOf(key: string, size: number): AsyncGenerator<Buffer> {
    for (let seq = 0, sent = 0; sent < size; seq += 1) {
      const chunk = await this.db
        .selectFrom('attachment_chunks')
        .select('data')
        .where('key', '=', key)
        .where('seq', '=', seq)
        .executeTakeFirst();
      if (!chunk) throw new Error(`attachment object ${key} was deleted while it was read`);
      sent += chunk.data.length;
      yield chunk.data;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.completeObject(key)) !== undefined;
  }

  /** An object still being written, or whose write failed, is not there. */
  private completeObject(key: string) {
    return this.db
      .selectFrom('attachment_objects')
      .select('size')
      .where('key', '=', key)
      .where('complete', '=', true)
      .executeTakeFirst();
  }

  async delete(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.db.deleteFrom('attachment_objects').where('key', 'in', inJsonList(keys)).execute();
  }

  async *list(): AsyncIterable<StoredObject> {
    const rows = await this.db.selectFrom('attachment_objects').select(['key', 'stored_at']).execute();
    for (const row of rows) yield { key: row.key, storedAt: row.stored_at };
  }

  async check(): Promise<void> {
    await this.db.selectFrom('attachment_objects').select('key').limit(1).execute();
  }
}
