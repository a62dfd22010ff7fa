import assert from 'node:assert/strict';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Kysely, sql } from 'kysely';
import yazl from 'yazl';
import { up as repairNoteIds } from '../src/db/migrations/0012_note_ids.js';
import {
  MAX_IMPORT_BYTES,
  MAX_IMPORT_NOTES,
  MAX_UNREADABLE_LISTED,
} from '../src/features/transfer/service.js';
import { isNoteId } from '../src/shared/noteIds.js';
import {
  archiveForm,
  attach,
  downloadSha,
  fetchAs,
  image,
  sha256,
  unzip,
  zipOf,
} from './helpers/archives.js';
import {
  clientOf,
  createApiKey,
  createUserClient,
  OWNER_PASSWORD,
  ownerClientFor,
  setupOwner,
  type TestClient,
} from './helpers/client.js';
import { databaseUrlFor, dropDatabaseOf, onPostgres } from './helpers/postgres.js';
import {
  type ServerProcess,
  spawnServer,
  startServer,
  type TestServer,
  tempDataDir,
} from './helpers/server.js';

const FORMAT = { format: 'keepsake-notes-export', version: 1, exportedAt: '2026-01-01T00:00:00.000Z' };
const A_UUID = '0b3c1f64-52d7-4e0a-a8f1-7c6d2e9b4a17';
/** The ids an attacker's notes.json carries (issue 26), and two a UUID format check lets through. */
const HOSTILE_IDS = ['../../../x', 'not-a-uuid', '', 'y'.repeat(200_000), `urn:uuid:${A_UUID}`, ' ../etc'];

const importZip = (client: TestClient, data: Buffer) =>
  client.request('POST', '/api/import', { body: archiveForm(data) });

/** The server's entry point in a process of its own, on a fresh DATA_DIR (and database). */
async function spawnOwnServer(): Promise<ServerProcess & { alive(): boolean; stop(): Promise<void> }> {
  const dataDir = tempDataDir();
  const database: Record<string, string> = onPostgres ? { DATABASE_URL: await databaseUrlFor(dataDir) } : {};
  const server = await spawnServer({ DATA_DIR: dataDir, ...database });
  let exited = false;
  server.child.once('exit', () => {
    exited = true;
  });
  return {
    ...server,
    alive: () => !exited,
    async stop() {
      if (!exited) {
        const gone = once(server.child, 'exit');
        server.child.kill('SIGTERM');
        await gone;
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (onPostgres) await dropDatabaseOf(dataDir);
    },
  };
}

/**
 * Stores a note under another id, with every row that names it, as the server did before ids
 * were checked (foreign keys are checked at commit on SQLite, and not at all on PostgreSQL
 * while the transaction replicates).
 */
async function storeUnderId(db: Kysely<any>, from: string, to: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (onPostgres) await sql`SET LOCAL session_replication_role = replica`.execute(trx);
    else await sql`PRAGMA defer_foreign_keys = ON`.execute(trx);
    await sql`UPDATE notes SET id = ${to} WHERE id = ${from}`.execute(trx);
    for (const table of [
      'note_tags',
      'note_revisions',
      'attachments',
      'note_collaborators',
      'share_links',
      'note_tombstones',
    ]) {
      await sql`UPDATE ${sql.table(table)} SET note_id = ${to} WHERE note_id = ${from}`.execute(trx);
    }
  });
}

describe('hostile note ids in an imported notes.json (issue 26, item 2)', () => {
  let server: Awaited<ReturnType<typeof spawnOwnServer>>;
  let owner: TestClient;
  before(async () => {
    server = await spawnOwnServer();
    owner = await setupOwner(server.url);
  });
  after(() => server?.stop());

  it('become UUIDs, the same ones on a second import; the export then works and the process lives', async () => {
    const notes = HOSTILE_IDS.map((id, i) => ({ id, title: `hostile ${i}`, content: 'x' }));
    notes.push({ id: A_UUID.toUpperCase(), title: 'upper', content: 'kept, in lowercase' });
    const archive = await zipOf({ 'notes.json': JSON.stringify({ ...FORMAT, notes }) });

    const first = await importZip(owner, archive);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual([first.body.imported, first.body.unreadableCount], [notes.length, 0]);
    const listed = (await owner.get('/api/notes')).body as { id: string; title: string }[];
    assert.equal(listed.length, notes.length);
    for (const note of listed) assert.ok(isNoteId(note.id), `${note.title}: ${note.id.slice(0, 40)}`);
    assert.equal(listed.find((n) => n.title === 'upper')?.id, A_UUID);
    for (const note of listed) assert.equal((await owner.get(`/api/notes/${note.id}`)).status, 200);

    const again = await importZip(owner, archive);
    assert.deepEqual([again.body.imported, again.body.alreadyThere], [0, notes.length], again.text);

    const exported = await fetchAs(owner, '/api/export');
    assert.equal(exported.status, 200);
    const entries = await unzip(Buffer.from(await exported.arrayBuffer()));
    const json = JSON.parse(entries.get('notes.json')!.toString('utf8'));
    assert.deepEqual(json.notes.map((n: any) => n.id).sort(), listed.map((n) => n.id).sort());
    assert.equal([...entries.keys()].filter((name) => name.startsWith('notes/')).length, notes.length);

    assert.equal((await fetch(new URL('/api/health', server.url))).status, 200);
    assert.ok(server.alive(), server.output());
  });
});

describe('note ids by every other path (issue 26, item 2)', () => {
  let server: TestServer;
  let owner: TestClient;
  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
  });
  after(() => server.close());

  const noteCount = async () => (await owner.get('/api/notes')).body.length;

  it('REST refuses an id that is not a UUID, also one the uuid format lets through', async () => {
    for (const id of ['../x', '', `urn:uuid:${A_UUID}`]) {
      const response = await owner.post('/api/notes', { id, title: 'x' });
      assert.equal(response.status, 400, `${id}: ${response.text}`);
      assert.equal(response.body.code, 'validation_failed');
    }
    assert.equal(await noteCount(), 0);
    const upper = await owner.post('/api/notes', { id: A_UUID.toUpperCase(), title: 'x' });
    assert.deepEqual([upper.status, upper.body.id], [201, A_UUID]);
  });

  it('sync refuses a pushed id that is not a UUID', async () => {
    const before = await noteCount();
    for (const noteId of ['../x', `urn:uuid:${A_UUID.replace('0b', '1b')}`]) {
      const response = await owner.post('/api/sync', {
        changes: [{ noteId, operation: 'create', timestamp: Date.now(), data: { title: 'x' } }],
      });
      assert.equal(response.status, 400, `${noteId}: ${response.text}`);
    }
    assert.equal(await noteCount(), before);
  });

  it('MCP create_note takes no id (refused): its notes get new UUIDs', async () => {
    const { key } = await createApiKey(owner);
    const transport = new StreamableHTTPClientTransport(new URL('/api/mcp', server.url), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
    const client = new Client({ name: 'notes-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const before = await noteCount();
      const refused = (await client.callTool({
        name: 'create_note',
        arguments: { id: '../../../x', title: 'from an agent' },
      })) as CallToolResult;
      assert.equal(refused.isError, true);
      assert.equal(await noteCount(), before);
      const created = (await client.callTool({
        name: 'create_note',
        arguments: { title: 'from an agent' },
      })) as CallToolResult;
      const id = (created.structuredContent as { note: { id: string } }).note.id;
      assert.ok(isNoteId(id), id);
    } finally {
      await client.close();
    }
  });
});

describe('GET /api/export with a note the zip refuses (issue 26, item 2)', () => {
  it('fails that request only: every entry is awaited, and the server answers on', async () => {
    const server = await startServer();
    try {
      const { client } = await createUserClient(server, 'eve@example.com');
      // First of its batch: the export used to await only the batch's last note.
      const victim = (await client.post('/api/notes', { title: 'victim', content: 'x' })).body.id;
      for (let i = 0; i < 3; i++) await client.post('/api/notes', { title: `n${i}`, content: 'x' });
      // A path the zip writer refuses, as an id stored before migration 0012 could make.
      await storeUnderId(server.app.db, victim, '../../../x');
      const failed = await fetchAs(client, '/api/export')
        .then(async (response) => {
          await response.arrayBuffer();
          return response.status;
        })
        .catch(() => 'aborted');
      assert.notEqual(failed, 200);
      assert.equal((await fetch(new URL('/api/health', server.url))).status, 200);
      assert.equal((await client.get('/api/notes')).status, 200);
    } finally {
      await server.close();
    }
  });
});

describe('migration 0012_note_ids (issue 26, item 2)', () => {
  it('gives notes stored with other ids a UUID, with their tags, revisions, attachments, sharing and tombstones', async () => {
    const first = await startServer();
    const owner = await ownerClientFor(first);
    const { userId: bobId } = await createUserClient(first, 'bob@example.com');
    const { userId: carolId } = await createUserClient(first, 'carol@example.com');
    const note = (await owner.post('/api/notes', { title: 'Trip', content: 'first #holiday' })).body;
    await owner.patch(`/api/notes/${note.id}`, { content: 'second #holiday' });
    const picture = await image(7);
    const attachment = (await attach(owner, note.id, picture)).body;
    assert.equal((await owner.post(`/api/notes/${note.id}/collaborators`, { userId: bobId })).status, 201);
    const token = (await owner.post(`/api/notes/${note.id}/share`)).body.token;
    const other = (await owner.post('/api/notes', { title: 'Untouched' })).body;
    const bad = '../../../x';
    await sql`INSERT INTO note_tombstones (note_id, user_id, deleted_at) VALUES (${note.id}, ${carolId}, ${Date.now()})`.execute(
      first.app.db,
    );
    await storeUnderId(first.app.db, note.id, bad);
    const syncTime = Number((await owner.get('/api/sync?since=0')).headers.get('x-sync-time'));
    // The repair as the migrator runs it (in a transaction where DDL is transactional: PostgreSQL),
    // not by forgetting 0012 in kysely_migration: later migrations would then stand before it.
    const db = first.app.db as unknown as Kysely<unknown>;
    if (onPostgres) await db.transaction().execute((trx) => repairNoteIds(trx));
    else await repairNoteIds(db);
    await first.close({ keepData: true });

    const second = await startServer({ dataDir: first.dataDir });
    try {
      const again = clientOf(second);
      await again.post('/api/auth/login', { password: OWNER_PASSWORD });
      const listed = (await again.get('/api/notes')).body as any[];
      const trip = listed.find((n) => n.title === 'Trip');
      assert.ok(isNoteId(trip.id) && trip.id !== note.id, trip.id);
      assert.equal(listed.find((n) => n.title === 'Untouched').id, other.id);
      assert.deepEqual(trip.tags, ['holiday']);
      const revisions = (await again.get(`/api/notes/${trip.id}/revisions`)).body;
      assert.equal(revisions.length, 2, JSON.stringify(revisions));
      assert.equal(await downloadSha(again, trip.id, attachment.id), sha256(picture));
      const bobAgain = clientOf(second);
      await bobAgain.post('/api/auth/login', { email: 'bob@example.com', password: 'another secret' });
      assert.equal((await bobAgain.get(`/api/notes/${trip.id}`)).status, 200, 'bob still collaborates');
      assert.equal((await fetch(new URL(`/api/shared/${token}`, second.url))).status, 200, 'the link works');
      // Devices pull it under its new id, and drop the old one.
      const pulled = await again.get(`/api/sync?since=${syncTime}`);
      assert.ok(
        pulled.body.some((n: any) => n.id === trip.id),
        pulled.text.slice(0, 300),
      );
      const deleted = (await again.get(`/api/sync/deleted?since=${syncTime}`)).body as any[];
      assert.ok(
        deleted.some((d) => d.id === bad),
        JSON.stringify(deleted),
      );
      const carolTombstones = await sql<{ note_id: string }>`
        SELECT note_id FROM note_tombstones WHERE user_id = ${carolId}`.execute(second.app.db);
      assert.deepEqual(
        carolTombstones.rows.map((r) => r.note_id),
        [trip.id],
      );
      const exported = await fetchAs(again, '/api/export');
      assert.equal(exported.status, 200);
      await exported.arrayBuffer();
    } finally {
      await second.close();
    }
  });
});

/** A zip whose notes.json is `parts`, deflated as it is generated (the test never holds it whole). */
async function zipOfStream(parts: () => Generator<string>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addReadStream(Readable.from(parts()), 'notes.json');
  zip.end();
  return buffer(zip.outputStream as Readable);
}

/** Text that deflates about 95:1 (just under the 100:1 check): runs of `filler` with a random number now and then. */
function* compressible(bytes: number, filler: string): Generator<string> {
  for (let written = 0; written < bytes; ) {
    let chunk = '';
    for (let i = 0; i < 64; i++)
      chunk += `${filler.repeat(720 / filler.length)},${Math.floor(Math.random() * 1e9)}`;
    written += chunk.length;
    yield chunk;
  }
}

const BOMB_BYTES = 166_000_000;
const head = JSON.stringify(FORMAT).slice(0, -1);

describe('an import that inflates to 166 MB (issue 26, item 3)', () => {
  let server: Awaited<ReturnType<typeof spawnOwnServer>>;
  let owner: TestClient;
  before(async () => {
    server = await spawnOwnServer();
    owner = await setupOwner(server.url);
  });
  after(() => server?.stop());

  const rssOf = (pid: number) =>
    Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

  /** Imports `archive` while polling /api/health and the process's RSS; the answer and what was seen. */
  async function importWatched(archive: Buffer) {
    const pid = server.child.pid!;
    const baseline = rssOf(pid);
    let peak = baseline;
    let slowest = 0;
    const failures: string[] = [];
    let done = false;
    const watching = (async () => {
      while (!done) {
        peak = Math.max(peak, rssOf(pid));
        const started = Date.now();
        const health = await fetch(new URL('/api/health', server.url), {
          signal: AbortSignal.timeout(2000),
        }).catch((err: Error) => err);
        slowest = Math.max(slowest, Date.now() - started);
        if (health instanceof Error || health.status !== 200)
          failures.push(String(health instanceof Error ? health : health.status));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      return { response: await importZip(owner, archive), growth: peak - baseline, slowest, failures };
    } finally {
      done = true;
      await watching;
    }
  }

  it('of elements that are not notes: read up to the cap, the list of them capped, health answering', async (t) => {
    const archive = await zipOfStream(function* () {
      yield `${head},"notes":[0`;
      yield* compressible(BOMB_BYTES, ',0');
      yield ']}';
    });
    assert.ok(archive.length < 2 * 1024 * 1024, `${archive.length} bytes`);
    const { response, growth, slowest, failures } = await importWatched(archive);
    t.diagnostic(
      `zip ${archive.length} bytes; RSS +${Math.round(growth / 1048576)} MiB; slowest health ${slowest} ms`,
    );
    assert.equal(response.status, 200, response.text.slice(0, 500));
    assert.equal(response.body.imported, 0);
    assert.equal(response.body.unreadable.length, MAX_UNREADABLE_LISTED);
    assert.equal(response.body.unreadableCount, MAX_IMPORT_NOTES + 1);
    assert.deepEqual(response.body.unreadable[0], { source: 'notes.json#0', reason: 'not a note object' });
    assert.ok(growth < 768 * 1024 * 1024, `RSS grew by ${growth / 1048576} MiB`);
    assert.deepEqual(failures, [], `slowest health answer ${slowest} ms`);
    assert.ok(server.alive());
  });

  it('in one note: that note is skipped as it streams, the notes after it are imported', async (t) => {
    const archive = await zipOfStream(function* () {
      yield `${head},"notes":[{"title":"huge","content":"`;
      yield* compressible(BOMB_BYTES, 'a');
      yield '"},{"title":"after the huge one","content":"x"}]}';
    });
    assert.ok(archive.length < 2 * 1024 * 1024, `${archive.length} bytes`);
    const { response, growth, slowest, failures } = await importWatched(archive);
    t.diagnostic(
      `zip ${archive.length} bytes; RSS +${Math.round(growth / 1048576)} MiB; slowest health ${slowest} ms`,
    );
    assert.equal(response.status, 200, response.text.slice(0, 500));
    assert.equal(response.body.imported, 1);
    assert.deepEqual(
      response.body.unreadable.map((u: any) => u.source),
      ['notes.json#0'],
    );
    assert.match(response.body.unreadable[0].reason, /larger than a note can be/);
    assert.ok(growth < 768 * 1024 * 1024, `RSS grew by ${growth / 1048576} MiB`);
    assert.deepEqual(failures, [], `slowest health answer ${slowest} ms`);
  });
});

describe('POST /api/import size limit (issue 26, item 4)', () => {
  let server: TestServer;
  let owner: TestClient;
  before(async () => {
    server = await startServer();
    owner = await setupOwner(server.url);
  });
  after(() => server.close());

  it('takes an archive over 2 MiB', async () => {
    const padding = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < padding.length; i += 4) padding.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, i);
    const archive = await zipOf({ 'note.md': 'hello', 'padding.bin': padding }, false);
    assert.ok(archive.length > 3 * 1024 * 1024);
    const response = await importZip(owner, archive);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.imported, 1);
  });

  it(`refuses a declared body over ${MAX_IMPORT_BYTES / 1048576} MiB with 413 archive_too_large, before reading it`, async () => {
    const { hostname, port } = new URL(server.url);
    const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const request = http.request({
        hostname,
        port,
        method: 'POST',
        path: '/api/import',
        headers: {
          cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
          'content-type': 'multipart/form-data; boundary=x',
          'content-length': String(MAX_IMPORT_BYTES + 1024 * 1024),
        },
      });
      request.on('error', reject);
      request.on('response', async (response) => {
        resolve({
          status: response.statusCode!,
          body: JSON.parse((await buffer(response)).toString('utf8')),
        });
        request.destroy();
      });
      request.write(Buffer.alloc(64 * 1024));
    });
    assert.equal(answer.status, 413);
    assert.equal(answer.body.code, 'archive_too_large');
  });
});
