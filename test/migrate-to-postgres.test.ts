import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { attach, downloadSha, image } from './helpers/archives.js';
import { addUser, clientOf, createApiKey, OWNER_PASSWORD, setupOwner, TestClient } from './helpers/client.js';
import { databaseUrlFor, onPostgres } from './helpers/postgres.js';
import { mainArguments, spawnServer, startServer, tempDataDir } from './helpers/server.js';

/** `migrate-to-postgres` from DATA_DIR into the database of DATABASE_URL, in its own process. */
async function migrate(dataDir: string, databaseUrl: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      mainArguments('migrate-to-postgres'),
      {
        env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: databaseUrl },
      },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

/** Whether a setup request answered 2xx. */
async function succeeds(response: Promise<{ status: number }>): Promise<boolean> {
  const { status } = await response;
  return status >= 200 && status < 300;
}

async function queryOne(databaseUrl: string, query: string): Promise<Record<string, unknown>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(query)).rows[0];
  } finally {
    await client.end();
  }
}

async function userCount(databaseUrl: string): Promise<number> {
  return (await queryOne(databaseUrl, 'SELECT count(*)::int AS count FROM users')).count as number;
}

/** The attachment objects in the database store: complete ones, and the bytes of all their chunks. */
async function storedObjects(databaseUrl: string) {
  return queryOne(
    databaseUrl,
    `SELECT (SELECT count(*)::int FROM attachment_objects WHERE complete) AS objects,
            (SELECT coalesce(sum(octet_length(data)), 0)::int FROM attachment_chunks) AS bytes`,
  );
}

/** What the API answers about everything the notes are made of, for one client. */
async function answers(client: TestClient, noteId: string, attachmentId: string) {
  const body = async (url: string) => {
    const response = await client.get(url);
    assert.equal(response.status, 200, `${url}: ${response.text}`);
    return response.body;
  };
  return {
    notes: await body('/api/notes'),
    trash: await body('/api/notes?filter=trashed'),
    pulled: await body('/api/sync?since=0'),
    deleted: await body('/api/sync/deleted?since=0'),
    accents: await body('/api/search?q=cafe'),
    cjk: await body('/api/search?q=%E4%BA%AC%E3%82%BF'),
    tagged: await body('/api/search?q=%23travel'),
    tags: await body('/api/tags'),
    revisions: await body(`/api/notes/${noteId}/revisions`),
    download: await downloadSha(client, noteId, attachmentId),
    thumbnail: await downloadSha(client, noteId, attachmentId, { thumbnail: true }),
  };
}

describe('migrate-to-postgres (docs/decisions/0015-postgresql.md)', {
  skip: !onPostgres && 'needs TEST_DATABASE_URL',
}, () => {
  it('moves a DATA_DIR without loss, re-runs after a failed copy, and refuses a filled database', async () => {
    const dataDir = tempDataDir();
    // The SQLite server in its own process: this one's database is PostgreSQL.
    const sqliteServer = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: '' });
    let before: Awaited<ReturnType<typeof answers>>;
    let friendBefore: unknown;
    let note: { id: string };
    let attachment: { id: string };
    let friendId: number;
    try {
      const owner = await setupOwner(sqliteServer.url);
      friendId = await addUser(owner, 'friend@example.test', 'secret123');
      const friend = clientOf(sqliteServer.url);
      await friend.post('/api/auth/login', { email: 'friend@example.test', password: 'secret123' });
      note = (await owner.post('/api/notes', { title: 'Café plan', content: '東京タワー #travel' })).body;
      assert.ok(
        await succeeds(owner.patch(`/api/notes/${note.id}`, { content: '東京タワー #travel, edited' })),
      );
      const shared = (await owner.post('/api/notes', { title: 'Shared list', content: '- [ ] milk' })).body;
      assert.ok(await succeeds(owner.post(`/api/notes/${shared.id}/collaborators`, { userId: friendId })));
      assert.ok(await succeeds(owner.post(`/api/notes/${shared.id}/share`)));
      const trashed = (await owner.post('/api/notes', { title: 'old' })).body;
      assert.ok(await succeeds(owner.patch(`/api/notes/${trashed.id}`, { trashed: true })));
      const gone = (await owner.post('/api/notes', { title: 'gone' })).body;
      await owner.patch(`/api/notes/${gone.id}`, { trashed: true });
      assert.ok(await succeeds(owner.delete(`/api/notes/${gone.id}`)));
      attachment = (await attach(owner, note.id, await image(7))).body;
      await createApiKey(owner);
      before = await answers(owner, note.id, attachment.id);
      friendBefore = (await friend.get('/api/notes')).body;
    } finally {
      sqliteServer.child.kill('SIGTERM');
      await once(sqliteServer.child, 'exit');
    }

    const databaseUrl = await databaseUrlFor(dataDir);
    // A row PostgreSQL refuses half-way through the copy: nothing of the copy is kept.
    const sqlite = new SQLite(path.join(dataDir, 'notes.db'));
    const filename = sqlite.prepare('SELECT filename FROM attachments').pluck().get() as string;
    sqlite.prepare("UPDATE attachments SET filename = 'bad' || char(0)").run();
    const failed = await migrate(dataDir, databaseUrl);
    assert.equal(failed.code, 1, failed.output);
    assert.match(failed.output, /copy failed and PostgreSQL was left empty/);
    assert.equal(await userCount(databaseUrl), 0);
    sqlite.prepare('UPDATE attachments SET filename = ?').run(filename);
    const { size, thumbnail_size: thumbnailSize } = sqlite
      .prepare('SELECT size, thumbnail_size FROM attachments')
      .get() as { size: number; thumbnail_size: number };
    sqlite.close();
    // The bytes went first (the database is the default store with DATABASE_URL) and stay until the next run.
    assert.deepEqual(await storedObjects(databaseUrl), { objects: 2, bytes: size + thumbnailSize });

    // A file that no longer matches its row's hash stops the copy, naming it.
    const file = path.join(dataDir, 'attachments', 'files', attachment.id);
    const original = fs.readFileSync(file);
    fs.writeFileSync(file, Buffer.concat([original.subarray(0, -1), Buffer.from([original.at(-1)! ^ 1])]));
    const corrupt = await migrate(dataDir, databaseUrl);
    assert.equal(corrupt.code, 1, corrupt.output);
    assert.match(
      corrupt.output,
      new RegExp(`files/${attachment.id} in DATA_DIR does not match the size and SHA-256`),
    );
    assert.equal(await userCount(databaseUrl), 0);
    fs.writeFileSync(file, original);

    const moved = await migrate(dataDir, databaseUrl);
    assert.equal(moved.code, 0, moved.output);
    assert.match(moved.output, /notes: 3 rows, same digest on both/);
    assert.match(moved.output, /storage_usage: 2 rows, same digest on both/);
    assert.match(moved.output, /attachment files: 2 copied into the database, same SHA-256 on both/);
    // Replaced, not added to, by the second run; the SQLite DATA_DIR keeps its files.
    assert.deepEqual(await storedObjects(databaseUrl), { objects: 2, bytes: size + thumbnailSize });
    assert.deepEqual(fs.readFileSync(file), original);
    const again = await migrate(dataDir, databaseUrl);
    assert.equal(again.code, 1);
    assert.match(again.output, /already holds data/);

    // The same answers from PostgreSQL, and it takes new writes (the id sequences go on).
    const server = await startServer({ dataDir });
    try {
      const client = new TestClient(server.url);
      assert.equal((await client.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
      assert.deepEqual(await answers(client, note.id, attachment.id), before);
      const friendClient = new TestClient(server.url);
      await friendClient.post('/api/auth/login', { email: 'friend@example.test', password: 'secret123' });
      assert.deepEqual((await friendClient.get('/api/notes')).body, friendBefore);
      assert.equal((await client.post('/api/notes', { title: 'after the move #travel' })).status, 201);
      assert.equal((await client.get('/api/search?q=%23travel')).body.length, 2);
      const newcomer = await client.post('/api/users', {
        email: 'new@example.test',
        displayName: 'New',
        password: 'secret123',
      });
      assert.equal(newcomer.status, 201, newcomer.text);
      assert.equal(newcomer.body.id, friendId + 1);
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
