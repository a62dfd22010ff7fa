import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { clientOf, createUserClient, NEW_NOTE_ID, setupOwner, type TestClient } from './helpers/client.js';
import { ManualClock, startServer, type TestServer } from './helpers/server.js';

const DAY = 86_400_000;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('notes', () => {
  let server: TestServer;
  let owner: TestClient;
  let stranger: TestClient;
  /** Moved by hand where a test needs time to pass; tests never sleep. */
  const clock = new ManualClock();

  before(async () => {
    server = await startServer({ clock });
    owner = await setupOwner(server);
    ({ client: stranger } = await createUserClient(server, 'stranger@example.com'));
  });
  after(() => server.close());

  async function create(body: object = {}) {
    const response = await owner.post('/api/notes', body);
    assert.equal(response.status, 201, response.text);
    return response.body;
  }

  describe('POST /api/notes', () => {
    it('makes ids that grow with time (UUID version 7), so that creates append to the id indexes', async () => {
      const start = Date.now();
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push((await create()).id);
      const end = Date.now();
      for (const id of ids) {
        assert.match(id, NEW_NOTE_ID);
        const madeAt = Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);
        assert.ok(madeAt >= start && madeAt <= end, `${id} was not made between ${start} and ${end}`);
      }
      assert.deepEqual(ids.toSorted(), ids, 'a later note has a larger id');
    });

    it('fills every field with its default (D-NOTE-1) and answers a full Note', async () => {
      const note = await create();
      assert.match(note.id, /^[0-9a-f-]{36}$/);
      assert.equal(note.ownerId, 1);
      assert.equal(note.title, '');
      assert.equal(note.content, '');
      assert.equal(note.color, 'default');
      for (const flag of ['pinned', 'archived', 'trashed', 'checklistMode']) assert.equal(note[flag], false);
      assert.equal(note.sortOrder, 0);
      assert.equal(note.trashedAt, null);
      assert.equal(note.version, 1);
      assert.match(note.createdAt, ISO_MS);
      assert.equal(note.updatedAt, note.createdAt);
      assert.deepEqual(note.tags, []);
      assert.deepEqual(note.attachments, []);
    });

    it('keeps a client-given uuid, lower-cased, and answers 409 note_exists for a taken one', async () => {
      const id = randomUUID().toUpperCase();
      const note = await create({ id, title: 'mine' });
      assert.equal(note.id, id.toLowerCase());
      const again = await owner.post('/api/notes', { id, title: 'again' });
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'note_exists');
      const theirs = await stranger.post('/api/notes', { id });
      assert.equal(theirs.status, 409);
      assert.equal((await owner.get(`/api/notes/${id}`)).body.title, 'mine');
    });

    it('ignores unknown and read-only fields, so a whole Note may be sent back (D-NOTE-2)', async () => {
      const original = await create({ title: 'echo' });
      const echoed = await create({
        ...original,
        id: randomUUID(),
        version: 99,
        createdAt: '2000-01-01T00:00:00.000Z',
        tags: ['x'],
        attachments: [{ id: 'x' }],
        trashedAt: '2000-01-01T00:00:00.000Z',
        ownerId: 42,
        surprise: true,
      });
      assert.equal(echoed.version, 1);
      assert.equal(echoed.ownerId, 1);
      assert.deepEqual(echoed.tags, []);
      assert.equal(echoed.trashedAt, null);
      assert.notEqual(echoed.createdAt, '2000-01-01T00:00:00.000Z');
    });

    it('refuses wrong types, unknown colors and non-uuid ids with 400 and details (D-NOTE-2, D-ERR-1)', async () => {
      const cases: [object, string][] = [
        [{ color: 'blue' }, '/color'],
        [{ pinned: 'true' }, '/pinned'],
        [{ sortOrder: 1.5 }, '/sortOrder'],
        [{ sortOrder: '3' }, '/sortOrder'],
        [{ title: 7 }, '/title'],
        [{ content: null }, '/content'],
        [{ id: 'not-a-uuid' }, '/id'],
      ];
      for (const [body, path] of cases) {
        const response = await owner.post('/api/notes', body);
        assert.equal(response.status, 400, JSON.stringify(body));
        assert.equal(response.body.code, 'validation_failed');
        assert.equal(response.body.details[0].path, path);
      }
      const array = await owner.post('/api/notes', [1, 2]);
      assert.equal(array.status, 400);
    });

    it('enforces the title and content limits (D-ERR-5)', async () => {
      assert.equal((await owner.post('/api/notes', { title: 'x'.repeat(1000) })).status, 201);
      const title = await owner.post('/api/notes', { title: 'x'.repeat(1001) });
      assert.equal(title.status, 400);
      assert.equal(title.body.details[0].path, '/title');
      const content = await owner.post('/api/notes', { content: 'x'.repeat(1_000_001) });
      assert.equal(content.status, 400);
      assert.equal(content.body.details[0].path, '/content');
    });

    it('answers 413 payload_too_large for a JSON body over 2 MiB', async () => {
      const response = await owner.post('/api/notes', { content: 'x'.repeat(2 * 1024 * 1024) });
      assert.equal(response.status, 413);
      assert.equal(response.body.code, 'payload_too_large');
    });

    it('answers 400 invalid_json for malformed JSON and 415 for other media types', async () => {
      const broken = await owner.request('POST', '/api/notes', {
        body: '{"title": ',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(broken.status, 400);
      assert.equal(broken.body.code, 'invalid_json');
      const text = await owner.request('POST', '/api/notes', {
        body: 'hi',
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(text.status, 415, text.text);
      assert.equal(text.body.code, 'unsupported_media_type');
    });

    it('stamps trashedAt when created in the trash (D-NOTE-4)', async () => {
      const note = await create({ trashed: true });
      assert.match(note.trashedAt, ISO_MS);
    });
  });

  describe('GET /api/notes/:id', () => {
    it('answers the note with ETag "<version>" (D-NOTE-3)', async () => {
      const note = await create({ title: 'etag' });
      const response = await owner.get(`/api/notes/${note.id}`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('etag'), '"1"');
      assert.deepEqual(response.body, note);
    });

    it('answers 404 note_not_found for an unknown id, a non-uuid one included (D-ERR-2)', async () => {
      for (const id of [randomUUID(), '123']) {
        const missing = await owner.get(`/api/notes/${id}`);
        assert.equal(missing.status, 404);
        assert.deepEqual(Object.keys(missing.body).sort(), ['code', 'error', 'message', 'statusCode']);
        assert.equal(missing.body.code, 'note_not_found');
      }
    });

    it('answers 401 without a session', async () => {
      const note = await create();
      const response = await clientOf(server).get(`/api/notes/${note.id}`);
      assert.equal(response.status, 401);
      assert.equal(response.body.code, 'unauthenticated');
    });
  });

  describe("another user's note (D-ERR-2)", () => {
    it('is 404 on GET, PATCH and DELETE and is left unchanged', async () => {
      const note = await create({ title: 'private' });
      const get = await stranger.get(`/api/notes/${note.id}`);
      const patch = await stranger.patch(`/api/notes/${note.id}`, { title: 'hacked' });
      const del = await stranger.delete(`/api/notes/${note.id}`);
      for (const response of [get, patch, del]) {
        assert.equal(response.status, 404);
        assert.equal(response.body.code, 'note_not_found');
      }
      const after = (await owner.get(`/api/notes/${note.id}`)).body;
      assert.equal(after.title, 'private');
      assert.equal(after.version, 1);
    });

    it('never appears in the other user’s list', async () => {
      await create({ title: 'owner only' });
      const list = await stranger.get('/api/notes');
      assert.ok(list.body.every((n: any) => n.ownerId !== 1));
    });
  });

  describe('PATCH /api/notes/:id', () => {
    it('changes only the given fields and bumps version and updatedAt (D-NOTE-3)', async () => {
      const note = await create({ title: 'before', content: 'body', color: 'mint' });
      clock.advance(5);
      const response = await owner.patch(`/api/notes/${note.id}`, { title: 'after', pinned: true });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('etag'), '"2"');
      const updated = response.body;
      assert.equal(updated.title, 'after');
      assert.equal(updated.pinned, true);
      assert.equal(updated.content, 'body');
      assert.equal(updated.color, 'mint');
      assert.equal(updated.version, 2);
      assert.ok(updated.updatedAt > note.updatedAt);
      assert.equal(updated.createdAt, note.createdAt);
    });

    it('changes neither version nor updatedAt when nothing changes (D-NOTE-3)', async () => {
      const note = await create({ title: 'same', pinned: true });
      clock.advance(5);
      const response = await owner.patch(`/api/notes/${note.id}`, {
        title: 'same',
        pinned: true,
        version: 7,
      });
      assert.equal(response.body.version, 1);
      assert.equal(response.body.updatedAt, note.updatedAt);
      assert.equal((await owner.patch(`/api/notes/${note.id}`, {})).body.version, 1);
    });

    it('answers 412 version_mismatch when If-Match names an older version, and changes nothing', async () => {
      const note = await create({ title: 'v1' });
      await owner.patch(`/api/notes/${note.id}`, { title: 'v2' });
      const stale = await owner.patch(
        `/api/notes/${note.id}`,
        { title: 'lost' },
        { headers: { 'if-match': '"1"' } },
      );
      assert.equal(stale.status, 412);
      assert.equal(stale.body.code, 'version_mismatch');
      assert.equal((await owner.get(`/api/notes/${note.id}`)).body.title, 'v2');
      const fresh = await owner.patch(
        `/api/notes/${note.id}`,
        { title: 'v3' },
        { headers: { 'if-match': '"2"' } },
      );
      assert.equal(fresh.status, 200);
      const garbage = await owner.patch(
        `/api/notes/${note.id}`,
        { title: 'x' },
        { headers: { 'if-match': 'abc' } },
      );
      assert.equal(garbage.status, 400);
    });

    it('stamps trashedAt on trashing and clears it on restore (D-NOTE-4)', async () => {
      const note = await create();
      const trashed = (await owner.patch(`/api/notes/${note.id}`, { trashed: true })).body;
      assert.match(trashed.trashedAt, ISO_MS);
      const again = (await owner.patch(`/api/notes/${note.id}`, { trashed: true })).body;
      assert.equal(again.trashedAt, trashed.trashedAt);
      assert.equal(again.version, trashed.version);
      const restored = (await owner.patch(`/api/notes/${note.id}`, { trashed: false })).body;
      assert.equal(restored.trashedAt, null);
    });

    it('refuses bad input with 400 and stores nothing', async () => {
      const note = await create({ title: 'safe' });
      const response = await owner.patch(`/api/notes/${note.id}`, { title: 'changed', color: 'rainbow' });
      assert.equal(response.status, 400);
      assert.equal((await owner.get(`/api/notes/${note.id}`)).body.title, 'safe');
    });

    it('recomputes tags when content changes (D-TAG-2)', async () => {
      const note = await create({ content: '#alpha' });
      assert.deepEqual(note.tags, ['alpha']);
      const updated = (await owner.patch(`/api/notes/${note.id}`, { content: '#beta and #gamma' })).body;
      assert.deepEqual(updated.tags, ['beta', 'gamma']);
    });
  });

  describe('DELETE /api/notes/:id', () => {
    it('deletes permanently and answers Success', async () => {
      const note = await create();
      const response = await owner.delete(`/api/notes/${note.id}`);
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, { success: true });
      assert.equal((await owner.get(`/api/notes/${note.id}`)).status, 404);
      assert.equal((await owner.delete(`/api/notes/${note.id}`)).status, 404);
    });

    it('honours If-Match (D-NOTE-3)', async () => {
      const note = await create();
      await owner.patch(`/api/notes/${note.id}`, { title: 'v2' });
      assert.equal(
        (await owner.delete(`/api/notes/${note.id}`, { headers: { 'if-match': '"1"' } })).status,
        412,
      );
      assert.equal((await owner.get(`/api/notes/${note.id}`)).status, 200);
      assert.equal(
        (await owner.delete(`/api/notes/${note.id}`, { headers: { 'if-match': '"2"' } })).status,
        200,
      );
    });

    it('leaves a tombstone for sync (D-SYNC-3)', async () => {
      const note = await create();
      await owner.delete(`/api/notes/${note.id}`);
      const rows = await server.app.db
        .selectFrom('note_tombstones')
        .selectAll()
        .where('note_id', '=', note.id)
        .execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.user_id, 1);
    });
  });
});

describe('GET /api/notes', () => {
  let server: TestServer;
  let owner: TestClient;
  const ids: Record<string, string> = {};

  before(async () => {
    const clock = new ManualClock();
    server = await startServer({ clock });
    owner = await setupOwner(server);
    // Each note 3 ms newer than the one before, so "newest first" has one right answer.
    const make = async (name: string, body: object) => {
      ids[name] = (await owner.post('/api/notes', { title: name, ...body })).body.id;
      clock.advance(3);
    };
    await make('plain-old', {});
    await make('plain-new', {});
    await make('pinned', { pinned: true, sortOrder: 5 });
    await make('sorted-first', { sortOrder: -1 });
    await make('archived', { archived: true, content: '#work' });
    await make('trashed', { trashed: true, content: '#work' });
    await make('archived-trashed', { archived: true, trashed: true });
    await make('mint-work', { color: 'mint', content: 'see #Work/Q3 and #work' });
  });
  after(() => server.close());

  const titles = async (query = '') => (await owner.get(`/api/notes${query}`)).body.map((n: any) => n.title);

  it('lists active notes: pinned first, then sortOrder ascending, then newest (D-NOTE-5)', async () => {
    assert.deepEqual(await titles(), ['pinned', 'sorted-first', 'mint-work', 'plain-new', 'plain-old']);
    assert.deepEqual(await titles('?filter=all'), await titles());
  });

  it('filters archived (not trashed) and trashed (archived or not)', async () => {
    assert.deepEqual(await titles('?filter=archived'), ['archived']);
    assert.deepEqual((await titles('?filter=trashed')).sort(), ['archived-trashed', 'trashed']);
  });

  it('narrows by tag and color', async () => {
    assert.deepEqual(await titles('?tag=work'), ['mint-work']);
    assert.deepEqual(await titles('?tag=WORK/q3'), ['mint-work']);
    assert.deepEqual(await titles('?filter=archived&tag=work'), ['archived']);
    assert.deepEqual(await titles('?color=mint'), ['mint-work']);
    assert.deepEqual(await titles('?color=coral'), []);
  });

  it('answers 400 for an unknown filter or color', async () => {
    for (const query of ['?filter=deleted', '?color=blue', '?tag=']) {
      const response = await owner.get(`/api/notes${query}`);
      assert.equal(response.status, 400, query);
      assert.equal(response.body.code, 'validation_failed');
    }
  });

  it('carries tags and attachments on every note', async () => {
    const notes = (await owner.get('/api/notes')).body;
    const mint = notes.find((n: any) => n.title === 'mint-work');
    assert.deepEqual(mint.tags, ['work', 'work/q3']);
    assert.ok(notes.every((n: any) => Array.isArray(n.attachments) && Array.isArray(n.tags)));
  });
});

describe('trash retention (D-NOTE-4)', () => {
  let clock: ManualClock;
  let server: TestServer;
  let owner: TestClient;
  beforeEach(async () => {
    clock = new ManualClock();
    server = await startServer({ clock, env: { TRASH_RETENTION_DAYS: '30' } });
    owner = await setupOwner(server);
  });
  afterEach(() => server.close());

  it('deletes notes trashed longer than TRASH_RETENTION_DAYS and keeps the rest', async () => {
    const old = (await owner.post('/api/notes', { title: 'old', trashed: true })).body;
    clock.advance(20 * DAY);
    const recent = (await owner.post('/api/notes', { title: 'recent', trashed: true })).body;
    const active = (await owner.post('/api/notes', { title: 'active' })).body;
    clock.advance(11 * DAY);
    assert.equal(await server.app.services.notes.purgeExpiredTrash(), 1);
    assert.equal((await owner.get(`/api/notes/${old.id}`)).status, 404);
    assert.equal((await owner.get(`/api/notes/${recent.id}`)).status, 200);
    assert.equal((await owner.get(`/api/notes/${active.id}`)).status, 200);
  });

  it('runs at start-up', async () => {
    const note = (await owner.post('/api/notes', { trashed: true })).body;
    await server.close({ keepData: true });
    clock.advance(31 * DAY);
    server = await startServer({ clock, dataDir: server.dataDir });
    const client = clientOf(server);
    await client.post('/api/auth/login', { password: 'correct horse battery' });
    assert.equal((await client.get(`/api/notes/${note.id}`)).status, 404);
  });

  it('keeps trashed notes forever with TRASH_RETENTION_DAYS=0', async () => {
    await server.close();
    server = await startServer({ clock, env: { TRASH_RETENTION_DAYS: '0' } });
    owner = await setupOwner(server);
    const note = (await owner.post('/api/notes', { trashed: true })).body;
    clock.advance(3650 * DAY);
    assert.equal(await server.app.services.notes.purgeExpiredTrash(), 0);
    const row = await server.app.db
      .selectFrom('notes')
      .select('id')
      .where('id', '=', note.id)
      .executeTakeFirst();
    assert.equal(row?.id, note.id);
  });
});
