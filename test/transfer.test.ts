import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { createTransferService, IMPORT_LIMITS } from '../src/features/transfer/service.js';
import { openZip } from '../src/features/transfer/zip.js';
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
import { createUserClient, ownerClientFor, type TestClient } from './helpers/client.js';
import { run } from './helpers/commands.js';
import { startServer, type TestServer } from './helpers/server.js';
import { useServices } from './helpers/services.js';
import { keepTakeout, usec } from './helpers/takeout.js';

async function exportOf(client: TestClient): Promise<Buffer> {
  const response = await fetchAs(client, '/api/export');
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'application/zip');
  return Buffer.from(await response.arrayBuffer());
}

function importZip(client: TestClient, data: Buffer, headers: Record<string, string> = {}) {
  return client.request('POST', '/api/import', { body: archiveForm(data), headers });
}

/** What an export must carry over: everything but the server's own bookkeeping. */
const portable = (note: any) => ({
  id: note.id,
  title: note.title,
  content: note.content,
  color: note.color,
  pinned: note.pinned,
  archived: note.archived,
  trashed: note.trashed,
  checklistMode: note.checklistMode,
  sortOrder: note.sortOrder,
  createdAt: note.createdAt,
  tags: note.tags,
  attachments: note.attachments.map((a: any) => [a.filename, a.mimeType, a.size]),
});

const allNotes = async (client: TestClient) => {
  const notes = [];
  for (const filter of ['all', 'archived', 'trashed']) {
    const response = await client.get(`/api/notes?filter=${filter}`);
    notes.push(...response.body);
  }
  return notes.sort((a, b) => a.id.localeCompare(b.id));
};

describe('export and import of our own zip', () => {
  let source: TestServer;
  let target: TestServer;
  let alice: TestClient;
  let exported: Buffer;
  let sourceNotes: any[];
  const pictures: Buffer[] = [];

  before(async () => {
    [source, target] = await Promise.all([startServer(), startServer()]);
    ({ client: alice } = await createUserClient(source, 'alice@example.com'));
    const shopping = await alice.post('/api/notes', {
      title: 'Shopping: milk/eggs',
      content: '- [ ] milk\n- [x] eggs #groceries',
      color: 'sand',
      pinned: true,
      checklistMode: true,
      sortOrder: 5,
    });
    await alice.post('/api/notes', { title: 'Old', content: 'archived #old', archived: true, color: 'clay' });
    await alice.post('/api/notes', { title: '', content: 'binned', trashed: true });
    const trip = await alice.post('/api/notes', { title: 'Trip', content: 'Photos of #holiday/2026' });
    pictures.push(await image(1), await image(2, 'jpeg'));
    assert.equal((await attach(alice, trip.body.id, pictures[0]!, 'beach.png')).status, 201);
    assert.equal((await attach(alice, trip.body.id, pictures[1]!, 'hill café.jpg')).status, 201);
    assert.equal(shopping.status, 201);
    // A note shared with alice is its owner's: not in her export.
    const owner = await ownerClientFor(source);
    const shared = await owner.post('/api/notes', { title: 'Owner note shared with alice' });
    const users = await owner.get('/api/users');
    const aliceId = users.body.find((u: any) => u.email === 'alice@example.com').id;
    await owner.post(`/api/notes/${shared.body.id}/collaborators`, { userId: aliceId });

    sourceNotes = (await allNotes(alice)).filter((n) => n.title !== 'Owner note shared with alice');
    exported = await exportOf(alice);
  });
  after(async () => {
    await Promise.all([source.close(), target.close()]);
  });

  it('holds notes.json, a Markdown file with front matter per own note, and the attachment files', async () => {
    const entries = await unzip(exported);
    const json = JSON.parse(entries.get('notes.json')!.toString('utf8'));
    assert.equal(json.format, 'keepsake-notes-export');
    assert.deepEqual(json.notes.map((n: any) => n.id).sort(), sourceNotes.map((n) => n.id).sort());

    const markdown = [...entries.keys()].filter((name) => name.startsWith('notes/'));
    assert.equal(markdown.length, sourceNotes.length, 'the shared note is not in it');
    const shoppingFile = markdown.find((name) => name.startsWith('notes/Shopping- milk-eggs ('))!;
    assert.ok(shoppingFile, markdown.join(', '));
    const text = entries.get(shoppingFile)!.toString('utf8');
    const [, frontMatter, body] = /^---\n([\s\S]*?)---\n([\s\S]*)$/.exec(text)!;
    const shopping = sourceNotes.find((n) => n.title === 'Shopping: milk/eggs');
    assert.deepEqual(parse(frontMatter!), {
      title: shopping.title,
      color: 'sand',
      pinned: true,
      archived: false,
      trashed: false,
      checklistMode: true,
      createdAt: shopping.createdAt,
      updatedAt: shopping.updatedAt,
      tags: ['groceries'],
      id: shopping.id,
    });
    assert.equal(body, shopping.content);

    const trip = sourceNotes.find((n) => n.title === 'Trip');
    for (const [index, attachment] of trip.attachments.entries()) {
      const bytes = entries.get(`attachments/${trip.id}/${attachment.id}/${attachment.filename}`);
      assert.ok(bytes, attachment.filename);
      assert.equal(sha256(bytes), sha256(pictures[index]!));
    }
  });

  it('imports into another server losslessly: ids, fields, createdAt, tags, attachment bytes', async () => {
    const { client: bob } = await createUserClient(target, 'bob@example.com');
    const response = await importZip(bob, exported);
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body, {
      format: 'export',
      imported: sourceNotes.length,
      alreadyThere: 0,
      attachments: 2,
      unreadable: [],
      unreadableCount: 0,
    });
    const imported = await allNotes(bob);
    assert.deepEqual(imported.map(portable), sourceNotes.map(portable));
    const trip = imported.find((n) => n.title === 'Trip');
    const shas = await Promise.all(trip.attachments.map((a: any) => downloadSha(bob, trip.id, a.id)));
    assert.deepEqual(shas, pictures.map(sha256));
    // updatedAt is the target server's clock (D-SYNC-2), so pulls since before the import see them.
    for (const note of imported) assert.ok(Date.parse(note.updatedAt) > Date.parse(note.createdAt));

    const again = await importZip(bob, exported);
    assert.equal(again.status, 200);
    assert.equal(again.body.imported, 0);
    assert.equal(again.body.alreadyThere, sourceNotes.length);
    assert.equal((await allNotes(bob)).length, sourceNotes.length, 'no duplicates');
  });

  it('gives another user of the same server its own copies, again without duplicates', async () => {
    const { client: carol } = await createUserClient(source, 'carol@example.com');
    const first = await importZip(carol, exported);
    assert.equal(first.body.imported, sourceNotes.length);
    const second = await importZip(carol, exported);
    assert.equal(second.body.alreadyThere, sourceNotes.length);
    const copies = await allNotes(carol);
    assert.equal(copies.length, sourceNotes.length);
    assert.ok(
      copies.every((n) => !sourceNotes.some((s) => s.id === n.id)),
      'ids of alice notes are hers',
    );
    assert.equal(
      (await allNotes(alice)).length,
      sourceNotes.length + 1,
      "alice's notes (and the shared one) stay",
    );
  });

  it('works from the command line too: export --user and import --owner', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'export-'));
    try {
      const file = path.join(folder, 'alice.zip');
      const exportRun = await run(source, 'export', '--user', 'alice@example.com', file);
      assert.equal(exportRun.code, 0, exportRun.output);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      const owner = await ownerClientFor(target);
      const importRun = await run(target, 'import', '--owner', file);
      assert.equal(importRun.code, 0, importRun.output);
      assert.match(importRun.output, new RegExp(`Imported ${sourceNotes.length} notes with 2 attachments`));
      const withoutIds = (notes: any[]) =>
        notes
          .map(portable)
          .map(({ id: _, ...rest }) => rest)
          // Notes made in the same millisecond: the rest of the note orders them.
          .sort((a, b) =>
            `${a.createdAt} ${JSON.stringify(a)}`.localeCompare(`${b.createdAt} ${JSON.stringify(b)}`),
          );
      assert.deepEqual(withoutIds(await allNotes(owner)), withoutIds(sourceNotes));
      const usage = await run(source, 'export', file);
      assert.equal(usage.code, 2);
      assert.match(usage.output, /Give either --user <email> or --owner/);
      assert.equal((await run(source, 'export', '--user', 'nobody@example.com', file)).code, 1);
      const missing = await run(target, 'import', '--owner', path.join(folder, 'nothing.zip'));
      assert.deepEqual([missing.code, /nothing\.zip does not exist/.test(missing.output)], [2, true]);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('export of more notes than one batch', () => {
  let server: TestServer;
  after(() => server.close());

  it('has every note, in notes.json and as Markdown', async () => {
    server = await startServer();
    const { client } = await createUserClient(server, 'many@example.com');
    const ids: string[] = [];
    for (let push = 0; push < 2; push++) {
      const changes = Array.from({ length: 600 }, (_, i) => {
        const noteId = crypto.randomUUID();
        ids.push(noteId);
        return { noteId, operation: 'create', timestamp: Date.now(), data: { title: `n${push}-${i}` } };
      });
      assert.equal((await client.post('/api/sync', { changes })).status, 200);
    }
    const entries = await unzip(await exportOf(client));
    const json = JSON.parse(entries.get('notes.json')!.toString('utf8'));
    assert.deepEqual(json.notes.map((n: any) => n.id).sort(), ids.sort());
    assert.equal([...entries.keys()].filter((name) => name.endsWith('.md')).length, 1200);
  });
});

/** A Google Keep Takeout with one note of each kind, images and a broken file. */
async function keepTakeoutOfEachKind() {
  const photo = await image(7, 'jpeg');
  const drawing = await image(8);
  const archive = await keepTakeout(
    {
      Groceries: {
        color: 'YELLOW',
        isPinned: true,
        listContent: [
          { text: 'Milk', isChecked: false },
          // Sub-items (Keep's one level of indent): Takeout's flag, or a parent item's id.
          { text: 'Oat milk', isChecked: false, isIndented: true },
          { text: 'Bread', isChecked: true },
          { text: 'Rye', isChecked: true, superListItemId: 'bread-id' },
        ],
        title: 'Groceries',
        userEditedTimestampUsec: usec('2021-03-04T05:06:07.000Z'),
        createdTimestampUsec: usec('2020-01-02T03:04:05.000Z'),
        labels: [{ name: 'Home' }],
      },
      '2019-05-01T10_00_00.000+02_00': {
        attachments: [
          // Takeout names this file .jpg although the JSON says .jpeg.
          { filePath: '1a2b3c.jpeg', mimetype: 'image/jpeg' },
          { filePath: '4d5e6f.png', mimetype: 'image/png' },
        ],
        color: 'CERULEAN',
        isArchived: true,
        textContent: 'Lisbon, then Porto',
        title: '',
        userEditedTimestampUsec: usec('2019-05-02T10:00:00.000Z'),
        createdTimestampUsec: usec('2019-05-01T08:00:00.000Z'),
        labels: [{ name: 'Travel plans' }, { name: '2019' }],
      },
      Old: {
        color: 'GRAY',
        isTrashed: true,
        textContent: 'gone',
        title: 'Old',
        userEditedTimestampUsec: usec('2018-01-01T00:00:00.000Z'),
        createdTimestampUsec: usec('2018-01-01T00:00:00.000Z'),
      },
      Broken: '{"title": "cut off',
    },
    { '1a2b3c.jpg': photo, '4d5e6f.png': drawing },
  );
  return { archive, photo, drawing };
}

describe('import of a Google Keep Takeout', () => {
  let server: TestServer;
  let dave: TestClient;
  let takeout: Awaited<ReturnType<typeof keepTakeoutOfEachKind>>;
  let file: string;

  before(async () => {
    server = await startServer();
    ({ client: dave } = await createUserClient(server, 'dave@example.com'));
    takeout = await keepTakeoutOfEachKind();
    file = path.join(server.dataDir, '..', `takeout-${path.basename(server.dataDir)}.zip`);
    fs.writeFileSync(file, takeout.archive);
  });
  after(async () => {
    fs.rmSync(file, { force: true });
    await server.close();
  });

  it('maps fields, colours, checklists, labels and images, and reports what it could not read', async () => {
    const { code, output } = await run(server, 'import', '--user', 'dave@example.com', file);
    assert.equal(code, 0, output);
    assert.match(output, /Imported 3 notes with 2 attachments \(keep\); 0 were already there/);
    assert.match(output, /Takeout\/Keep\/Broken\.json: not readable JSON/);

    const notes = await allNotes(dave);
    const groceries = notes.find((n) => n.title === 'Groceries');
    assert.deepEqual(
      {
        content: groceries.content,
        color: groceries.color,
        pinned: groceries.pinned,
        checklistMode: groceries.checklistMode,
        createdAt: groceries.createdAt,
        tags: groceries.tags,
      },
      {
        content: '- [ ] Milk\n  - [ ] Oat milk\n- [x] Bread\n  - [x] Rye\n\n#Home',
        color: 'sand',
        pinned: true,
        checklistMode: true,
        createdAt: '2020-01-02T03:04:05.000Z',
        tags: ['home'],
      },
    );
    const trip = notes.find((n) => n.content.startsWith('Lisbon'));
    assert.equal(trip.content, 'Lisbon, then Porto\n\n#Travel_plans #label_2019');
    assert.deepEqual(
      [trip.color, trip.archived, trip.createdAt],
      ['storm', true, '2019-05-01T08:00:00.000Z'],
    );
    assert.deepEqual(trip.tags, ['label_2019', 'travel_plans']);
    assert.deepEqual(
      trip.attachments.map((a: any) => [a.filename, a.mimeType]),
      [
        ['1a2b3c.jpeg', 'image/jpeg'],
        ['4d5e6f.png', 'image/png'],
      ],
    );
    assert.equal(await downloadSha(dave, trip.id, trip.attachments[0].id), sha256(takeout.photo));
    const old = notes.find((n) => n.title === 'Old');
    assert.deepEqual([old.trashed, old.color], [true, 'chalk']);
  });

  it('creates nothing the second time', async () => {
    const before = (await allNotes(dave)).length;
    const { code, output } = await run(server, 'import', '--user', 'dave@example.com', file);
    assert.equal(code, 0, output);
    assert.match(output, /Imported 0 notes with 0 attachments \(keep\); 3 were already there/);
    assert.equal((await allNotes(dave)).length, before);
  });

  it('stamps fields with the original edit time, so a later device edit wins a sync (D-SYNC-5)', async () => {
    const groceries = (await allNotes(dave)).find((n) => n.title === 'Groceries');
    // Edited on a phone in 2022, offline, pushed now: newer than Keep's 2021 edit, older than the import.
    const push = await dave.post('/api/sync', {
      changes: [
        {
          noteId: groceries.id,
          operation: 'update',
          timestamp: Date.parse('2022-06-01T00:00:00.000Z'),
          data: { title: 'Groceries (phone)' },
        },
      ],
    });
    assert.equal(push.status, 200, push.text);
    assert.equal(push.body.results[0].status, 'applied', JSON.stringify(push.body));
    assert.equal((await dave.get(`/api/notes/${groceries.id}`)).body.title, 'Groceries (phone)');
  });
});

describe('import of Markdown files', () => {
  let server: TestServer;
  let erin: TestClient;
  let folder: string;

  before(async () => {
    server = await startServer();
    ({ client: erin } = await createUserClient(server, 'erin@example.com'));
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'markdown-'));
    fs.mkdirSync(path.join(folder, 'sub', 'img'), { recursive: true });
    fs.writeFileSync(
      path.join(folder, 'sub', 'with front matter.md'),
      '---\ntitle: Plans\ncolor: mint\npinned: true\ncreatedAt: 2024-02-03T04:05:06.000Z\ntags: [work, ideas]\nattachments: [img/sketch.png]\n---\nThe plan #work\n',
    );
    fs.writeFileSync(path.join(folder, 'sub', 'img', 'sketch.png'), await image(3));
    fs.writeFileSync(path.join(folder, 'todo.md'), '- [ ] call Ann\n- [x] post letter\n');
    fs.writeFileSync(path.join(folder, 'bad.md'), '---\ntitle: [unclosed\n---\nbody');
  });
  after(async () => {
    fs.rmSync(folder, { recursive: true, force: true });
    await server.close();
  });

  it('reads a folder: front matter when there is one, `- [ ]` lines as a checklist', async () => {
    const { code, output } = await run(server, 'import', '--user', 'erin@example.com', folder);
    assert.equal(code, 0, output);
    assert.match(output, /Imported 2 notes with 1 attachments \(markdown\)/);
    assert.match(output, /bad\.md: not readable/);
    const notes = await allNotes(erin);
    const plans = notes.find((n) => n.title === 'Plans');
    assert.deepEqual(
      [plans.content, plans.color, plans.pinned, plans.createdAt, plans.tags, plans.attachments.length],
      ['The plan #work\n\n#ideas', 'mint', true, '2024-02-03T04:05:06.000Z', ['ideas', 'work'], 1],
    );
    const todo = notes.find((n) => n.title === 'todo');
    assert.deepEqual([todo.content, todo.checklistMode], ['- [ ] call Ann\n- [x] post letter\n', true]);
  });

  it('reads the same files as a zip over the API, once', async () => {
    const archive = await zipOf({
      'notes/todo.md': '- [ ] call Ann\n',
      'notes/plain.md': 'Just text',
      '__MACOSX/notes/._plain.md': 'resource fork',
    });
    const first = await importZip(erin, archive);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual([first.body.format, first.body.imported], ['markdown', 2]);
    const second = await importZip(erin, archive);
    assert.deepEqual([second.body.imported, second.body.alreadyThere], [0, 2]);
  });
});

describe('POST /api/import from the attacker’s side', () => {
  let server: TestServer;
  let frank: TestClient;

  before(async () => {
    server = await startServer();
    ({ client: frank } = await createUserClient(server, 'frank@example.com'));
  });
  after(() => server.close());

  const refused = async (data: Buffer, pattern: RegExp, status = 400, code = 'invalid_archive') => {
    const response = await importZip(frank, data);
    assert.equal(response.status, status, response.text);
    assert.equal(response.body.code, code);
    assert.equal(response.body.statusCode, status);
    assert.match(response.body.message, pattern);
    assert.equal((await frank.get('/api/notes')).body.length, 0, 'nothing was imported');
  };

  it('refuses a zip bomb: an entry compressed far beyond what real files compress to', async () => {
    await refused(await zipOf({ 'bomb.md': Buffer.alloc(64 * 1024 * 1024) }), /compressed more than 100:1/);
  });

  it('refuses more entries than the limit', async () => {
    const entries: Record<string, string> = {};
    for (let i = 0; i <= 20_000; i++) entries[`n${i}.md`] = '';
    await refused(await zipOf(entries, false), /more than 20000 entries/);
  });

  it('refuses entry names that climb out of the archive', async () => {
    const archive = await zipOf({ 'aa/evil.md': 'x' });
    // Same length, so every offset in the zip stays right.
    const evil = Buffer.from(archive.toString('latin1').replaceAll('aa/evil.md', '../evil.md'), 'latin1');
    await refused(evil, /not a readable zip file/);
  });

  it('refuses a file that is not a zip, and a zip with no notes', async () => {
    await refused(Buffer.from('just some text, not a zip'), /not a readable zip file/);
    await refused(await zipOf({ 'photo.png': await image(4) }), /No notes found/);
  });

  it('refuses a form without the file part, and a read-only key before reading the upload', async () => {
    const empty = new FormData();
    empty.append('other', 'x');
    const missing = await frank.request('POST', '/api/import', { body: empty });
    assert.deepEqual([missing.status, missing.body.code], [400, 'invalid_archive']);

    const key = await frank.post('/api/settings/api-keys', { name: 'read', scopes: ['notes:read'] });
    const readOnly = await importZip(frank, await zipOf({ 'a.md': 'x' }), {
      authorization: `Bearer ${key.body.key}`,
      cookie: '',
    });
    assert.deepEqual([readOnly.status, readOnly.body.code], [403, 'insufficient_scope']);
    const anonymous = await fetch(new URL('/api/export', server.url));
    assert.equal(anonymous.status, 401);
  });

  it('skips notes over the limits and attachments that are not images, with reasons', async () => {
    const archive = await zipOf({
      'long.md': `---\ntitle: ${'x'.repeat(1001)}\n---\n`,
      'fine.md': '---\nattachments: [evil.svg, ../../etc/passwd]\n---\nhello',
      'evil.svg': '<svg onload="alert(1)"/>',
    });
    const response = await importZip(frank, archive);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.imported, 1);
    assert.deepEqual(
      response.body.unreadable.map((u: any) => u.source),
      ['long.md', 'evil.svg', 'etc/passwd'],
      JSON.stringify(response.body),
    );
    assert.match(response.body.unreadable[0].reason, /title must NOT have more than 1000 characters/);
  });
});

describe('an import when the database fails part-way', () => {
  const instance = useServices();

  it('ends with that failure once the notes in flight are done, and writes nothing after', async () => {
    const notes = Object.fromEntries(
      Array.from({ length: 60 }, (_, n) => [`Note ${n}`, { title: `Keep ${n}`, textContent: `text ${n}` }]),
    );
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'import-failure-'));
    const file = path.join(directory, 'takeout.zip');
    fs.writeFileSync(file, await keepTakeout(notes));
    // The database goes away at the 20th note: every write from then on fails, as in an outage.
    let creates = 0;
    let written = 0;
    const { notes: real, attachments } = instance.services;
    const failing: typeof real = {
      ...real,
      create: async (...args) => {
        if (++creates >= 20) throw new Error('the database went away');
        // Slow writes, so that several are in flight when one fails.
        await new Promise((resolve) => setTimeout(resolve, 20));
        const note = await real.create(...args);
        written++;
        return note;
      },
    };
    const transfer = createTransferService({
      db: instance.db,
      notes: failing,
      attachments,
      uploadDir: directory,
    });
    const files = await openZip(file, IMPORT_LIMITS);
    try {
      await assert.rejects(transfer.importFrom(instance.owner.actor, files), /the database went away/);
      const settled = written;
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(written, settled, 'no note is written after the import has ended');
      // It stopped reading: the notes in flight past the 20th, never the rest of the archive.
      assert.ok(creates < 60, `${creates} creates`);
    } finally {
      files.close();
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});
