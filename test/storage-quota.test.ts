import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import sharp from 'sharp';
import { createUserClient, ownerClientFor, setupOwner, type TestClient } from './helpers/client.js';
import { sqliteMigratedBefore } from './helpers/migrations.js';
import { sqliteOnly } from './helpers/postgres.js';
import { startServer, tempDataDir, useOwner, useServer } from './helpers/server.js';
import { storedKeys, uploadImage } from './helpers/uploads.js';

// STORAGE_QUOTA_MB=1: each user may own 1,048,576 bytes of note text and attachments.
const QUOTA = 1024 * 1024;
const text = (bytes: number) => 'q'.repeat(bytes);

function assertQuotaExceeded(response: { status: number; body: any }) {
  assert.equal(response.status, 413, JSON.stringify(response.body));
  assert.deepEqual(response.body, {
    statusCode: 413,
    error: 'Payload Too Large',
    code: 'quota_exceeded',
    message:
      "The note owner's storage quota of 1 MiB is used up; delete notes, text or attachments to make room",
  });
}

async function create(client: TestClient, fields: Record<string, unknown>) {
  const response = await client.post('/api/notes', fields);
  assert.equal(response.status, 201, response.text);
  return response.body;
}

/** Notes of `bytes` bytes of content in all (a note holds at most 1,000,000 characters). */
async function fill(client: TestClient, bytes: number) {
  const notes = [];
  for (let left = bytes; left > 0; left -= 900_000) {
    notes.push(await create(client, { content: text(Math.min(left, 900_000)) }));
  }
  return notes;
}

describe('Storage quota (STORAGE_QUOTA_MB)', () => {
  const server = useServer({ env: { STORAGE_QUOTA_MB: '1' } });
  const owner = useOwner(server);
  let users = 0;
  const newUser = async () =>
    createUserClient(server, `quota${++users}@example.com`, 'another secret', owner);

  it('refuses a create or an update that would pass the quota, and stores nothing of it', async () => {
    const { client } = await newUser();
    const [first, second] = await fill(client, QUOTA - 10);
    assertQuotaExceeded(await client.post('/api/notes', { content: text(11) }));
    assertQuotaExceeded(await client.patch(`/api/notes/${second.id}`, { content: text(148_587) }));
    const listed = await client.get('/api/notes');
    assert.deepEqual(
      listed.body.map((n: any) => [n.id, n.version, n.content.length]).sort(),
      [
        [first.id, 1, 900_000],
        [second.id, 1, 148_566],
      ].sort(),
    );
    // Up to the byte: the quota itself is allowed.
    await create(client, { content: text(10) });
  });

  it('counts UTF-8 bytes, not characters', async () => {
    const { client } = await newUser();
    // 'é' is 2 bytes: 524,288 of them fill the quota exactly.
    await create(client, { content: 'é'.repeat(QUOTA / 2) });
    assertQuotaExceeded(await client.post('/api/notes', { title: 'a' }));
  });

  it('refuses a sync push that would pass the quota as a whole: nothing of it is applied', async () => {
    const { client } = await newUser();
    const [a, b] = [randomUUID(), randomUUID()];
    const push = await client.post('/api/sync', {
      changes: [
        { noteId: a, operation: 'create', timestamp: 1, data: { content: text(600_000) } },
        { noteId: b, operation: 'create', timestamp: 2, data: { content: text(600_000) } },
      ],
    });
    assertQuotaExceeded(push);
    assert.equal((await client.get(`/api/notes/${a}`)).status, 404);
    assert.equal((await client.get(`/api/notes/${b}`)).status, 404);
    // Each alone fits.
    const fits = await client.post('/api/sync', {
      changes: [{ noteId: a, operation: 'create', timestamp: 1, data: { content: text(600_000) } }],
    });
    assert.equal(fits.status, 200, fits.text);
  });

  it('counts a collaborator’s edit against the note owner, not the collaborator', async () => {
    const noteOwner = await newUser();
    const collaborator = await newUser();
    const [, shared] = await fill(noteOwner.client, QUOTA - 100);
    const added = await noteOwner.client.post(`/api/notes/${shared.id}/collaborators`, {
      userId: collaborator.userId,
    });
    assert.equal(added.status, 201, added.text);
    assertQuotaExceeded(await collaborator.client.patch(`/api/notes/${shared.id}`, { title: text(200) }));
    // The collaborator's own quota is untouched by the shared note.
    await fill(collaborator.client, QUOTA - 1000);
    // And the note owner may still use the 100 bytes left.
    const edited = await collaborator.client.patch(`/api/notes/${shared.id}`, { title: text(100) });
    assert.equal(edited.status, 200, edited.text);
  });

  it('counts attachments (file and thumbnail) and refuses an upload over the quota', async () => {
    const { client } = await newUser();
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3a7' } })
      .png()
      .toBuffer();
    await create(client, { content: text(500_000) });
    const note = await create(client, { content: text(QUOTA - 500_000 - png.length - 20) });
    assertQuotaExceeded(await uploadImage(client, note.id, png));
    const after = await client.get(`/api/notes/${note.id}`);
    assert.deepEqual([after.body.version, after.body.attachments], [1, []]);

    // With room for the file but not for its generated thumbnail, the write itself is refused,
    // after the bytes were stored: they are removed again, in whichever store they went.
    await client.patch(`/api/notes/${note.id}`, { content: text(QUOTA - 500_000 - png.length - 30) });
    const keysBefore = await storedKeys(server);
    assertQuotaExceeded(await uploadImage(client, note.id, png));
    assert.deepEqual((await client.get(`/api/notes/${note.id}`)).body.attachments, []);
    assert.deepEqual(await storedKeys(server), keysBefore);

    // Room for both: the upload is stored, and counts as the file plus its thumbnail.
    const content = QUOTA - 500_000 - png.length - 2000;
    await client.patch(`/api/notes/${note.id}`, { content: text(content) });
    const stored = await uploadImage(client, note.id, png);
    assert.equal(stored.status, 201);
    const thumbnail = await client.get(
      `/api/notes/${note.id}/attachments?attachmentId=${stored.body.id}&thumb=1`,
    );
    const thumbnailSize = Number(thumbnail.headers.get('content-length'));
    assert.ok(thumbnailSize > 0);
    const full = await client.patch(`/api/notes/${note.id}`, {
      content: text(content + 2000 - thumbnailSize),
    });
    assert.equal(full.status, 200, full.text);
    assertQuotaExceeded(await client.post('/api/notes', { title: 'x' }));
  });

  it('gives the space back when notes and their attachments are deleted', async () => {
    const { client } = await newUser();
    // Noise does not compress: about 120 kB, and a 28 kB thumbnail.
    const noisy = await sharp(randomBytes(200 * 200 * 3), { raw: { width: 200, height: 200, channels: 3 } })
      .png()
      .toBuffer();
    assert.ok(noisy.length > 100_000);
    const note = await create(client, { content: text(500_000) });
    assert.equal((await uploadImage(client, note.id, noisy)).status, 201);
    await create(client, { content: text(350_000) });
    assertQuotaExceeded(await client.post('/api/notes', { content: text(100_000) }));
    assert.equal((await client.delete(`/api/notes/${note.id}`)).status, 200);
    // The note's text and its attachment are both freed: 640,000 bytes fit again.
    await create(client, { content: text(640_000) });
  });

  it('does not limit users when STORAGE_QUOTA_MB is 0 (the default)', async () => {
    const unlimited = await startServer();
    try {
      const client = await setupOwner(unlimited);
      await create(client, { content: text(900_000) });
      await create(client, { content: text(900_000) });
    } finally {
      await unlimited.close();
    }
  });
});

describe('Storage quota lowered below what a user already has', () => {
  it('still allows every write that frees space or keeps it, and refuses any growth', async () => {
    const first = await startServer();
    const client = await setupOwner(first);
    const big = await create(client, { content: text(700_000) });
    const other = await create(client, { content: text(700_000) });
    await first.close({ keepData: true });

    const second = await startServer({ dataDir: first.dataDir, env: { STORAGE_QUOTA_MB: '1' } });
    try {
      const again = await ownerClientFor(second);
      assertQuotaExceeded(await again.patch(`/api/notes/${big.id}`, { title: 'x' }));
      // Shrinking, still over the quota: allowed.
      const shrunk = await again.patch(`/api/notes/${big.id}`, { content: text(500_000) });
      assert.equal(shrunk.status, 200, shrunk.text);
      // Same size (no text change): allowed.
      assert.equal((await again.patch(`/api/notes/${big.id}`, { pinned: true })).status, 200);
      assert.equal((await again.delete(`/api/notes/${other.id}`)).status, 200);
      // Back under the quota: growth up to it is allowed again.
      await create(again, { content: text(500_000) });
    } finally {
      await second.close();
    }
  });
});

describe('Migration 0008 (storage usage)', sqliteOnly, () => {
  it('counts the notes and attachments stored before it, each against its owner', async () => {
    const dataDir = tempDataDir();
    const db = await sqliteMigratedBefore(dataDir, '0008');
    await sql`
      INSERT INTO users (id, email, display_name, password_hash, is_owner, created_at)
      VALUES (1, '', 'Owner', 'x', 1, 0), (2, 'b@example.com', 'B', 'x', 0, 0), (3, 'c@example.com', 'C', 'x', 0, 0)`.execute(
      db,
    );
    const note = (id: string, owner: number, title: string, content: string) =>
      sql`INSERT INTO notes (id, owner_id, title, content, color, pinned, archived, trashed, checklist_mode,
            sort_order, created_at, updated_at, version)
          VALUES (${id}, ${owner}, ${title}, ${content}, 'default', 0, 0, 0, 0, 0, 0, 0, 1)`.execute(db);
    await note('n1', 1, 'héllo', 'abc'); // 6 + 3 bytes
    await note('n2', 1, '', 'x'.repeat(1000));
    await note('n3', 2, 'b', '');
    await sql`INSERT INTO attachments (id, note_id, filename, mime_type, size, thumbnail_path, created_at, sha256)
              VALUES ('a1', 'n2', 'a.png', 'image/png', 5000, NULL, 0, '')`.execute(db);
    await db.destroy();

    const server = await startServer({ dataDir });
    try {
      const usage = await server.app.db.selectFrom('storage_usage').selectAll().orderBy('user_id').execute();
      assert.deepEqual(usage, [
        { user_id: 1, bytes: 9 + 1000 + 5000 },
        { user_id: 2, bytes: 1 },
        { user_id: 3, bytes: 0 },
      ]);
    } finally {
      await server.close();
    }
  });
});
