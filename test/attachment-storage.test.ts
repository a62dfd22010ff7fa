import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CHUNK_BYTES, DatabaseStorage } from '../src/features/attachments/databaseStorage.js';
import { type AttachmentStorage, DirectoryStorage } from '../src/features/attachments/storage.js';
import { attach, downloadSha, image, sha256 } from './helpers/archives.js';
import { clientOf, OWNER_PASSWORD, setupOwner } from './helpers/client.js';
import { onPostgres } from './helpers/postgres.js';
import { tempDataDir, useServer, withServerProcesses } from './helpers/server.js';

const MiB = 1024 * 1024;
const KEY = 'files/0b7cbd1a-54a5-4cf1-a2c8-5f3b4ee1a2b9';
const needsPostgres = { skip: !onPostgres && 'needs TEST_DATABASE_URL' };

/** A new local file with these bytes (a store's put may move it away). */
function localFile(bytes: Buffer): string {
  const file = path.join(tempDataDir(), 'upload');
  fs.writeFileSync(file, bytes);
  return file;
}

async function read(storage: AttachmentStorage, key: string): Promise<Buffer | null> {
  const found = await storage.get(key);
  if (!found) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of found.stream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  assert.equal(bytes.length, found.size);
  return bytes;
}

async function keys(storage: AttachmentStorage): Promise<string[]> {
  const found: string[] = [];
  for await (const { key } of storage.list()) found.push(key);
  return found;
}

/** The same rules for every store: what put/get/exists/delete/list promise. */
function storageContract(name: string, make: () => AttachmentStorage, options = {}) {
  describe(`${name}: the storage contract`, options, () => {
    it('stores, reads back, replaces and deletes an object', async () => {
      const storage = make();
      const first = randomBytes(3 * CHUNK_BYTES + 17);
      await storage.put(KEY, localFile(first), { size: first.length, sha256: sha256(first) });
      assert.equal(await storage.exists(KEY), true);
      assert.deepEqual(await read(storage, KEY), first);
      const second = randomBytes(100);
      await storage.put(KEY, localFile(second), { size: second.length });
      assert.deepEqual(await read(storage, KEY), second);
      assert.deepEqual(await keys(storage), [KEY]);
      await storage.delete([KEY, 'files/not-there']);
      assert.equal(await storage.exists(KEY), false);
      assert.equal(await storage.get(KEY), null);
      assert.deepEqual(await keys(storage), []);
    });

    it('refuses bytes that do not match their size or hash, keeping nothing under the key', async () => {
      const storage = make();
      const bytes = randomBytes(2 * CHUNK_BYTES + 1);
      await assert.rejects(
        storage.put(KEY, localFile(bytes), { size: bytes.length, sha256: sha256(randomBytes(8)) }),
        /changed before it was stored/,
      );
      await assert.rejects(storage.put(KEY, localFile(bytes), { size: bytes.length + 1 }), /changed/);
      assert.equal(await storage.exists(KEY), false);
      assert.deepEqual(await keys(storage), []);
    });

    it('refuses a key that is not built from an id', async () => {
      const storage = make();
      await assert.rejects(storage.put('../notes.db', localFile(Buffer.from('x')), { size: 1 }), /invalid/);
    });
  });
}

storageContract('the directory store', () => new DirectoryStorage(path.join(tempDataDir(), 'attachments')));

describe('the database store', needsPostgres, () => {
  let chunkReads = 0;
  const server = useServer({
    onQuery: (sql) => {
      if (sql.startsWith('select "data" from "attachment_chunks"')) chunkReads += 1;
    },
  });
  const storage = () => new DatabaseStorage(server.app.db);
  storageContract('the database store', storage);

  async function chunks() {
    return server.app.db
      .selectFrom('attachment_chunks')
      .select(['key', 'seq', (eb) => eb.fn<number>('octet_length', ['data']).as('bytes')])
      .orderBy('seq')
      .execute();
  }

  it('leaves no chunk behind when a put fails half-way', async () => {
    const bytes = randomBytes(4 * CHUNK_BYTES);
    await assert.rejects(
      storage().put(KEY, localFile(bytes), { size: bytes.length, sha256: 'f'.repeat(64) }),
    );
    assert.deepEqual(await chunks(), []);
    const empty = await server.app.db.selectFrom('attachment_objects').selectAll().execute();
    assert.deepEqual(empty, []);
  });

  it('streams 20 MiB in and out in chunks, reading a chunk only when the reader asks for one', async () => {
    const bytes = randomBytes(20 * MiB);
    await storage().put(KEY, localFile(bytes), { size: bytes.length, sha256: sha256(bytes) });
    const rows = await chunks();
    assert.equal(rows.length, (20 * MiB) / CHUNK_BYTES);
    assert.ok(rows.every((row) => row.bytes === CHUNK_BYTES));

    chunkReads = 0;
    const found = await storage().get(KEY);
    assert.ok(found);
    const reader = found.stream[Symbol.asyncIterator]();
    assert.equal(((await reader.next()).value as Buffer).length, CHUNK_BYTES);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Backpressure: a reader that stopped after one chunk has made the store fetch a few, not 80.
    assert.ok(chunkReads <= 3, `${chunkReads} chunks fetched`);
    const hash = createHash('sha256').update(bytes.subarray(0, CHUNK_BYTES));
    let size = CHUNK_BYTES;
    for (let next = await reader.next(); !next.done; next = await reader.next()) {
      assert.ok((next.value as Buffer).length <= CHUNK_BYTES);
      size += next.value.length;
      hash.update(next.value);
    }
    assert.equal(size, bytes.length);
    assert.equal(hash.digest('hex'), sha256(bytes));
    await storage().delete([KEY]);
    assert.deepEqual(await chunks(), []);
  });
});

describe('two server processes on one PostgreSQL database, no shared disk', needsPostgres, () => {
  it('an upload on one is downloaded, file and thumbnail, and deleted on the other', async () => {
    await withServerProcesses(
      2,
      async ([first, second]) => {
        const uploader = await setupOwner(first!.url);
        const note = (await uploader.post('/api/notes', { title: 'photos' })).body;
        const png = await image(3);
        const uploaded = await attach(uploader, note.id, png);
        assert.equal(uploaded.status, 201, uploaded.text);
        const ownThumbnail = await downloadSha(uploader, note.id, uploaded.body.id, { thumbnail: true });

        const reader = clientOf(second!.url);
        assert.equal((await reader.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
        assert.equal(await downloadSha(reader, note.id, uploaded.body.id), sha256(png));
        assert.equal(await downloadSha(reader, note.id, uploaded.body.id, { thumbnail: true }), ownThumbnail);
        assert.match(ownThumbnail, /^[0-9a-f]{64}$/);

        const removed = await reader.delete(
          `/api/notes/${note.id}/attachments?attachmentId=${uploaded.body.id}`,
        );
        assert.equal(removed.status, 200);
        assert.equal(await downloadSha(uploader, note.id, uploaded.body.id), 'status 404');
      },
      { separateDataDirs: true },
    );
  });
});
