import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { archiveForm, image, zipOf } from './helpers/archives.js';
import { setupOwner } from './helpers/client.js';
import { sqliteOnly } from './helpers/postgres.js';
import { startServer, type TestServer, tempDataDir } from './helpers/server.js';
import { uploadImage } from './helpers/uploads.js';

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe('Files under DATA_DIR are readable by the server’s user only', () => {
  let server: TestServer;
  let parent: string;
  let umask: number;

  before(async () => {
    // The usual umask, which alone would leave files 0644 and directories 0755.
    umask = process.umask(0o022);
    parent = tempDataDir();
    const dataDir = path.join(parent, 'data');
    // The directory store on both engines (on PostgreSQL the default keeps the bytes in the database).
    server = await startServer({ dataDir, env: { ATTACHMENTS_DIR: path.join(dataDir, 'attachments') } });
    const owner = await setupOwner(server);
    const note = await owner.post('/api/notes', { title: 'Private' });
    const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#123' } })
      .png()
      .toBuffer();
    assert.equal((await uploadImage(owner, note.body.id, png)).status, 201);
  });
  after(async () => {
    await server?.close();
    fs.rmSync(parent, { recursive: true, force: true });
    process.umask(umask);
  });

  it('creates DATA_DIR, attachments/, uploads/ and their folders 0700', () => {
    const { dataDir } = server;
    const directories = [dataDir, 'attachments', 'attachments/files', 'attachments/thumbnails', 'uploads'];
    for (const directory of directories) {
      assert.equal(modeOf(path.resolve(dataDir, directory)).toString(8), '700', directory);
    }
  });

  it('creates notes.db, its -wal and -shm, and attachment files 0600', sqliteOnly, () => {
    const { dataDir } = server;
    const attachments = path.join(dataDir, 'attachments');
    const stored = ['files', 'thumbnails'].flatMap((folder) =>
      fs.readdirSync(path.join(attachments, folder)).map((name) => path.join(attachments, folder, name)),
    );
    assert.equal(stored.length, 2);
    const files = ['notes.db', 'notes.db-wal', 'notes.db-shm'].map((name) => path.join(dataDir, name));
    for (const file of [...files, ...stored]) {
      assert.equal(modeOf(file).toString(8), '600', path.relative(dataDir, file));
    }
  });
});

describe('Whichever request creates them first, what the server makes under DATA_DIR is private', () => {
  let umask: number;
  before(() => {
    umask = process.umask(0o022);
  });
  after(() => process.umask(umask));

  /** Every directory and file under `root` that is not private, with its mode. */
  function notPrivate(root: string): string[] {
    const found: string[] = [];
    for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
      const full = path.join(entry.parentPath, entry.name);
      const expected = entry.isDirectory() ? '700' : '600';
      const mode = modeOf(full).toString(8);
      if (mode !== expected) found.push(`${path.relative(root, full)} ${mode}`);
    }
    return found;
  }

  it('an import first (uploads/), then a health check (the attachment store)', async () => {
    const parent = tempDataDir();
    const dataDir = path.join(parent, 'data');
    const server = await startServer({
      dataDir,
      env: { ATTACHMENTS_DIR: path.join(dataDir, 'attachments') },
    });
    try {
      const owner = await setupOwner(server);
      const archive = await zipOf({
        'a.md': '---\nattachments: [photo.png]\n---\nhello',
        'photo.png': await image(3),
      });
      const imported = await owner.request('POST', '/api/import', { body: archiveForm(archive) });
      assert.equal(imported.status, 200, imported.text);
      assert.equal(imported.body.attachments, 1);
      assert.equal((await owner.get('/api/health')).status, 200);
      assert.ok(fs.existsSync(path.join(dataDir, 'uploads')));
      assert.deepEqual(notPrivate(dataDir), []);
      assert.equal(modeOf(dataDir).toString(8), '700');
    } finally {
      await server.close();
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });
});
