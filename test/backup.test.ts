import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it, mock } from 'node:test';
import SQLite from 'better-sqlite3';
import { runCommand } from '../src/cli/commands.js';
import { loadConfig } from '../src/config.js';
import { registerFunctions } from '../src/db/connection.js';
import { createBackup } from '../src/features/backup/service.js';
import { attach, downloadSha, image, sha256, unzip, zipOf } from './helpers/archives.js';
import { createUserClient, ownerClientFor, TestClient } from './helpers/client.js';
import { run, runIn } from './helpers/commands.js';
import { sqliteOnly } from './helpers/postgres.js';
import { mainArguments, startServer, type TestServer, tempDataDir } from './helpers/server.js';

// Tests run from the repository root (npm test runs them bundled elsewhere).
const ROOT = process.cwd();

/** The `backup` command in its own process, as an operator runs it beside the server. */
async function backupInChildProcess(
  dataDir: string,
  file: string,
): Promise<{ code: number; output: string }> {
  const child = spawn(process.execPath, mainArguments('backup', file), {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const [code] = await once(child, 'exit');
  return { code: code as number, output };
}

const tempFolder = () => fs.mkdtempSync(path.join(os.tmpdir(), 'backup-test-'));

interface Acknowledged {
  noteId: string;
  title: string;
  at: number;
  attachment?: { id: string; sha256: string; at: number };
}

describe('backup while the server takes writes, then restore', sqliteOnly, () => {
  let source: TestServer;
  let restored: TestServer;
  let folder: string;

  before(() => {
    folder = tempFolder();
  });
  after(async () => {
    await Promise.all([source?.close(), restored?.close()]);
    fs.rmSync(folder, { recursive: true, force: true });
  });

  it('holds every write acknowledged before it started, and nothing half-present', async (t) => {
    source = await startServer();
    const owner = await ownerClientFor(source);
    const { client: alice } = await createUserClient(source, 'alice@example.com');
    const pictures = await Promise.all([1, 2, 3, 4].map((seed) => image(seed)));

    // Bounded load: three writers, at most 150 notes each, until the backup has finished.
    const acknowledged: Acknowledged[] = [];
    const attempted = new Set<string>();
    let stop = false;
    const writer = async (writerIndex: number) => {
      for (let i = 0; i < 150 && !stop; i++) {
        const title = `w${writerIndex}-${i}`;
        const created = await alice.post('/api/notes', { title, content: `note ${title} #load` });
        assert.equal(created.status, 201, created.text);
        attempted.add(created.body.id);
        const record: Acknowledged = { noteId: created.body.id, title, at: Date.now() };
        acknowledged.push(record);
        if (i % 2 === 0) {
          const picture = pictures[(writerIndex + i) % pictures.length]!;
          const uploaded = await attach(alice, created.body.id, picture);
          assert.equal(uploaded.status, 201, uploaded.text);
          record.attachment = { id: uploaded.body.id, sha256: sha256(picture), at: Date.now() };
        }
      }
    };
    const writers = [0, 1, 2].map(writer);
    while (acknowledged.length < 30) await new Promise((resolve) => setTimeout(resolve, 20));

    const file = path.join(folder, 'backup.zip');
    const startedAt = Date.now();
    const backup = await backupInChildProcess(source.dataDir, file);
    const writesDuring = acknowledged.filter((a) => a.at > startedAt).length;
    t.diagnostic(
      `backup process took ${Date.now() - startedAt} ms; ${acknowledged.length - writesDuring} notes acknowledged before it, ${writesDuring} while it ran`,
    );
    stop = true;
    await Promise.all(writers);
    assert.equal(backup.code, 0, backup.output);
    assert.match(backup.output, /Backup written to .*: 2 users, \d+ notes, \d+ attachments/);
    assert.ok(writesDuring > 0, 'the server took writes while the backup ran');

    const dataDir = path.join(folder, 'restored');
    const restore = await runIn(dataDir, 'restore', file);
    assert.equal(restore.code, 0, restore.output);
    restored = await startServer({ dataDir });

    const restoredOwner = await ownerClientFor(restored);
    assert.deepEqual((await restoredOwner.get('/api/users')).body, (await owner.get('/api/users')).body);
    const restoredAlice = new TestClient(restored.url);
    const login = await restoredAlice.post('/api/auth/login', {
      email: 'alice@example.com',
      password: 'another secret',
    });
    assert.equal(login.status, 200);

    const notes: any[] = (await restoredAlice.get('/api/notes')).body;
    const byId = new Map(notes.map((n) => [n.id, n]));
    for (const write of acknowledged.filter((a) => a.at < startedAt)) {
      const note = byId.get(write.noteId);
      assert.ok(note, `note ${write.title}, acknowledged before the backup, is in it`);
      assert.equal(note.content, `note ${write.title} #load`);
      if (write.attachment && write.attachment.at < startedAt) {
        assert.ok(
          note.attachments.some((a: any) => a.id === write.attachment!.id),
          `the attachment of ${write.title} is in it`,
        );
      }
    }
    const shas = new Map(
      acknowledged.flatMap((a) => (a.attachment ? [[a.attachment.id, a.attachment.sha256]] : [])),
    );
    for (const note of notes) {
      assert.ok(attempted.has(note.id), 'only notes that were written');
      for (const attachment of note.attachments) {
        assert.equal(
          await downloadSha(restoredAlice, note.id, attachment.id),
          shas.get(attachment.id),
          'every attachment row has its file, with the bytes uploaded',
        );
      }
    }
    assert.ok(notes.length < acknowledged.length, 'writes after the backup are not in it');
  });
});

describe('restore refuses what it cannot restore whole', sqliteOnly, () => {
  let server: TestServer;
  let folder: string;
  let file: string;

  before(async () => {
    server = await startServer();
    folder = tempFolder();
    file = path.join(folder, 'backup.zip');
    const { client } = await createUserClient(server, 'bob@example.com');
    const note = await client.post('/api/notes', { title: 'kept' });
    assert.equal((await attach(client, note.body.id, await image(9))).status, 201);
    const { code, output } = await run(server, 'backup', file);
    assert.equal(code, 0, output);
  });
  after(async () => {
    await server.close();
    fs.rmSync(folder, { recursive: true, force: true });
  });

  const restoreFails = async (archive: Buffer, pattern: RegExp) => {
    const damaged = path.join(folder, `damaged-${Math.random()}.zip`);
    fs.writeFileSync(damaged, archive);
    const target = path.join(folder, `target-${Math.random()}`);
    const { code, output } = await runIn(target, 'restore', damaged);
    assert.equal(code, 1, output);
    assert.match(output, pattern);
    assert.equal(fs.existsSync(target), false, 'nothing is left of a failed restore');
  };

  it('restores with owner-only modes: 0700 folders, 0600 files', async () => {
    const target = path.join(folder, 'modes');
    const { code, output } = await runIn(target, 'restore', file);
    assert.equal(code, 0, output);
    assert.match(output, /Restored into .*: 2 users, 1 notes, 1 attachments \(2 files\)/);
    const modes = [
      target,
      ...fs.readdirSync(target, { recursive: true }).map((p) => path.join(target, String(p))),
    ];
    for (const entry of modes) {
      const stat = fs.statSync(entry);
      assert.equal(stat.mode & 0o777, stat.isDirectory() ? 0o700 : 0o600, entry);
    }
  });

  it('refuses a DATA_DIR that is not empty, and leaves it as it was', async () => {
    const target = tempDataDir();
    fs.writeFileSync(path.join(target, 'notes.db'), 'existing data');
    const { code, output } = await runIn(target, 'restore', file);
    assert.equal(code, 1);
    assert.match(output, /is not empty: restore only into a new or empty DATA_DIR/);
    assert.deepEqual(fs.readdirSync(target), ['notes.db']);
    assert.equal(fs.readFileSync(path.join(target, 'notes.db'), 'utf8'), 'existing data');
    fs.rmSync(target, { recursive: true });
  });

  it('refuses a file whose bytes changed', async () => {
    const archive = fs.readFileSync(file);
    const entries = await unzip(archive);
    const [name, picture] = [...entries].find(([entry]) => entry.startsWith('attachments/files/'))!;
    // Stored uncompressed: the picture's bytes are in the zip as they are; change one.
    const at = archive.indexOf(picture.subarray(64, 96)) + 8;
    const damaged = Buffer.from(archive);
    damaged[at] = damaged[at]! ^ 0xff;
    await restoreFails(damaged, new RegExp(`${name} does not match the manifest`));
  });

  it('refuses row counts that differ from the manifest, and files the manifest does not list', async () => {
    const entries = await unzip(fs.readFileSync(file));
    const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
    manifest.database.counts.notes += 1;
    await restoreFails(
      await zipOf({ ...Object.fromEntries(entries), 'manifest.json': JSON.stringify(manifest) }),
      /1 notes rows, the manifest says 2/,
    );
    await restoreFails(
      await zipOf({ ...Object.fromEntries(entries), 'attachments/files/extra': 'x' }),
      /Not in the manifest: attachments\/files\/extra/,
    );
    await restoreFails(await zipOf({ 'notes.db': 'x' }), /no manifest.json: not a backup/);
  });

  it('says so when there is nothing to back up or the file is missing', async () => {
    const empty = tempDataDir();
    const backup = await runIn(empty, 'backup', path.join(folder, 'none.zip'));
    assert.equal(backup.code, 1);
    assert.match(backup.output, /There is no database/);
    assert.equal((await runIn(empty, 'restore')).code, 2);
    fs.rmSync(empty, { recursive: true });
  });
});

describe('backup and restore with DATABASE_URL', () => {
  it('refuse, pointing to pg_dump, before touching anything', async () => {
    const dataDir = tempDataDir();
    const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    for (const command of ['backup', 'restore']) {
      const error = mock.method(console, 'error', () => {});
      try {
        assert.equal(await runCommand(command, [path.join(dataDir, 'b.zip')], config), 1);
        assert.match(String(error.mock.calls[0]?.arguments[0]), /pg_dump/);
      } finally {
        error.mock.restore();
      }
    }
    assert.deepEqual(fs.readdirSync(dataDir), []);
    fs.rmSync(dataDir, { recursive: true });
  });
});

describe('backup and restore with ATTACHMENTS_DIR', () => {
  it('refuse, since the attachments are outside DATA_DIR, before touching anything', async () => {
    const dataDir = tempDataDir();
    const config = loadConfig({ DATA_DIR: dataDir, ATTACHMENTS_DIR: path.join(dataDir, 'shared') });
    for (const command of ['backup', 'restore']) {
      const error = mock.method(console, 'error', () => {});
      try {
        assert.equal(await runCommand(command, [path.join(dataDir, 'b.zip')], config), 1);
        assert.match(
          String(error.mock.calls[0]?.arguments[0]),
          /ATTACHMENTS_DIR, attachments are outside DATA_DIR/,
        );
      } finally {
        error.mock.restore();
      }
    }
    assert.deepEqual(fs.readdirSync(dataDir), []);
    fs.rmSync(dataDir, { recursive: true });
  });
});

describe('backup snapshot and attachment files agree', sqliteOnly, () => {
  let server: TestServer;
  let folder: string;
  let noteId: string;
  let client: TestClient;

  before(async () => {
    server = await startServer();
    folder = tempFolder();
    ({ client } = await createUserClient(server, 'carol@example.com'));
    noteId = (await client.post('/api/notes', { title: 'pictures' })).body.id;
    for (const seed of [1, 2]) assert.equal((await attach(client, noteId, await image(seed))).status, 201);
  });
  after(async () => {
    await server.close();
    fs.rmSync(folder, { recursive: true, force: true });
  });

  /**
   * A connection to the live database that runs `beforeSnapshot` / `afterSnapshot` around the
   * first snapshot, the way another writer's commit can fall just there.
   */
  function liveWith(hooks: {
    beforeSnapshot?: (db: SQLite.Database) => void;
    afterSnapshot?: (db: SQLite.Database) => void;
  }) {
    const db = new SQLite(path.join(server.dataDir, 'notes.db'));
    registerFunctions(db);
    let snapshots = 0;
    const prepare = db.prepare.bind(db);
    db.prepare = ((text: string) => {
      const statement = prepare(text);
      if (!text.startsWith('VACUUM INTO')) return statement;
      return {
        run: (target: string) => {
          const first = snapshots++ === 0;
          if (first) hooks.beforeSnapshot?.(db);
          statement.run(target);
          if (first) hooks.afterSnapshot?.(db);
        },
      };
    }) as typeof db.prepare;
    return Object.assign(db, { snapshotsTaken: () => snapshots });
  }

  const attachmentRows = (db: SQLite.Database) =>
    db.prepare('SELECT id, thumbnail_path FROM attachments ORDER BY id').all() as {
      id: string;
      thumbnail_path: string;
    }[];
  const storedFile = (key: string) => path.join(server.dataDir, 'attachments', key);

  /** An upload: its files are stored first, then its row commits. */
  function upload(db: SQLite.Database, id: string) {
    const [template] = attachmentRows(db);
    fs.copyFileSync(storedFile(`files/${template!.id}`), storedFile(`files/${id}`));
    fs.copyFileSync(storedFile(template!.thumbnail_path), storedFile(`thumbnails/${id}.webp`));
    db.prepare(
      `INSERT INTO attachments (id, note_id, filename, mime_type, size, thumbnail_path, created_at, sha256)
       SELECT ?, note_id, filename, mime_type, size, ?, created_at, sha256 FROM attachments WHERE id = ?`,
    ).run(id, `thumbnails/${id}.webp`, template!.id);
  }

  /** A delete: the row goes first, then its files. */
  function remove(db: SQLite.Database, id: string) {
    db.prepare('DELETE FROM attachments WHERE id = ?').run(id);
    fs.rmSync(storedFile(`files/${id}`));
    fs.rmSync(storedFile(`thumbnails/${id}.webp`));
  }

  async function backupAndRestore(live: ReturnType<typeof liveWith>, name: string, snapshots: number) {
    try {
      const file = path.join(folder, `${name}.zip`);
      const manifest = await createBackup(live, server.dataDir, file);
      assert.equal(live.snapshotsTaken(), snapshots, 'database snapshots taken');
      const { code, output } = await runIn(path.join(folder, name), 'restore', file);
      assert.equal(code, 0, output);
      return manifest;
    } finally {
      live.close();
    }
  }

  const filesOf = (manifest: { files: { path: string }[] }) =>
    manifest.files.filter((f) => f.path.startsWith('attachments/files/')).map((f) => f.path.slice(18));

  it('stopped at any step, removes its work folder and partial archive before it ends, with the reason', async () => {
    const leftovers = () => fs.readdirSync(server.dataDir).filter((name) => name.startsWith('.backup-'));
    const live = liveWith({});
    const file = path.join(folder, 'aborted.zip');
    let stops = 0;
    try {
      // Stopped while it writes the archive: as soon as the partial archive is there.
      const controller = new AbortController();
      const writing = createBackup(live, server.dataDir, file, controller.signal);
      let settled = false;
      writing.then(
        () => {
          settled = true;
        },
        () => {
          settled = true;
        },
      );
      while (!fs.existsSync(`${file}.partial`) && !settled) await new Promise(setImmediate);
      const reason = new Error('stopped while writing the archive');
      controller.abort(reason);
      await assert.rejects(writing, (err) => err === reason);
      assert.deepEqual(leftovers(), []);
      assert.deepEqual(
        fs.readdirSync(folder).filter((name) => name.startsWith('aborted.')),
        [],
      );
      // Stops it after 0, 1, 2, ... turns of the event loop, until it finishes first.
      for (let turns = 0; ; turns++) {
        const controller = new AbortController();
        const backup = createBackup(live, server.dataDir, file, controller.signal);
        for (let i = 0; i < turns; i++) await new Promise(setImmediate);
        const reason = new Error(`stopped after ${turns} turns`);
        controller.abort(reason);
        const finished = await backup.then(
          () => true,
          (err) => {
            assert.equal(err, reason);
            return false;
          },
        );
        assert.deepEqual(leftovers(), [], reason.message);
        assert.deepEqual(
          fs.readdirSync(folder).filter((name) => name.startsWith('aborted.')),
          finished ? ['aborted.zip'] : [],
        );
        if (finished) break;
        stops++;
      }
    } finally {
      live.close();
      fs.rmSync(file, { force: true });
    }
    assert.ok(stops > 10, `stopped at ${stops} points`);
  });

  it('takes the files of rows committed after it listed the files but before the snapshot', async () => {
    const added = '00000000-0000-4000-8000-000000000001';
    const manifest = await backupAndRestore(
      liveWith({ beforeSnapshot: (db) => upload(db, added) }),
      'late-upload',
      1,
    );
    assert.deepEqual(manifest.missingFiles, []);
    assert.ok(filesOf(manifest).includes(added));
    assert.equal(manifest.database.counts.attachments, 3);
  });

  it('keeps what the snapshot saw when an attachment is deleted after it', async () => {
    let deleted = '';
    const live = liveWith({
      afterSnapshot(db) {
        deleted = attachmentRows(db)[0]!.id;
        remove(db, deleted);
      },
    });
    const manifest = await backupAndRestore(live, 'late-delete', 1);
    assert.deepEqual(manifest.missingFiles, []);
    assert.ok(filesOf(manifest).includes(deleted), 'the row is in the snapshot, and so is its file');
  });

  it('starts again when a file that came after the listing is deleted after the snapshot', async () => {
    const fleeting = '00000000-0000-4000-8000-000000000002';
    const live = liveWith({
      beforeSnapshot: (db) => upload(db, fleeting),
      afterSnapshot: (db) => remove(db, fleeting),
    });
    const manifest = await backupAndRestore(live, 'fleeting', 2);
    assert.deepEqual(manifest.missingFiles, [], 'no row without its file');
    assert.ok(!filesOf(manifest).includes(fleeting));
    assert.equal(manifest.database.counts.attachments, 2, 'the second snapshot, taken after the delete');
  });
});

describe('backup run by cron (docs/backup.md, exit codes)', sqliteOnly, () => {
  let server: TestServer;
  let folder: string;
  const leftovers = () =>
    fs.readdirSync(server.dataDir).filter((name) => name.startsWith('.backup-') || name.endsWith('.partial'));
  before(async () => {
    server = await startServer();
    folder = tempFolder();
    const owner = await ownerClientFor(server);
    // ~15 MiB of text that deflate cannot shrink much: a backup that takes a moment.
    for (let i = 0; i < 10; i++) {
      const content = randomBytes(750_000).toString('base64');
      assert.equal((await owner.post('/api/notes', { content })).status, 201);
    }
  });
  after(async () => {
    await server.close();
    fs.rmSync(folder, { recursive: true, force: true });
  });

  it('refuses a target folder that does not exist in one sentence, exit code 1, leaving nothing', async () => {
    const missing = path.join(folder, 'not-mounted', 'notes.zip');
    const { code, output } = await run(server, 'backup', missing);
    assert.equal(code, 1, output);
    assert.equal(output, `The folder ${path.dirname(missing)} does not exist: create it (or mount it) first`);
    assert.deepEqual(leftovers(), []);
  });

  it('leaves no snapshot in DATA_DIR and no partial archive when stopped by a signal', async () => {
    const file = path.join(folder, 'interrupted.zip');
    const child = spawn(process.execPath, mainArguments('backup', file), {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const exited = once(child, 'exit');
    // Stopped once its work has begun (its snapshot folder exists).
    while (leftovers().length === 0 && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    child.kill('SIGTERM');
    const [code] = await exited;
    assert.equal(code, 143, output);
    assert.match(output, /Backup interrupted by SIGTERM; nothing was left behind/);
    assert.deepEqual(leftovers(), []);
    assert.deepEqual(fs.readdirSync(folder), []);
  });

  it("removes a day-old snapshot a killed backup left, and keeps a running one's", async () => {
    const killed = path.join(server.dataDir, '.backup-killed');
    const running = path.join(server.dataDir, '.backup-running');
    fs.mkdirSync(killed);
    fs.mkdirSync(running);
    const dayAgo = (Date.now() - 25 * 60 * 60 * 1000) / 1000;
    fs.utimesSync(killed, dayAgo, dayAgo);
    const { code, output } = await run(server, 'backup', path.join(folder, 'after.zip'));
    assert.equal(code, 0, output);
    assert.match(output, /Removed what an earlier, killed backup had left in DATA_DIR/);
    assert.deepEqual(leftovers(), ['.backup-running']);
    fs.rmSync(running, { recursive: true });
  });
});
