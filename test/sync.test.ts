import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import sharp from 'sharp';
import { clientOf, createUserClient, OWNER_PASSWORD, setupOwner } from './helpers/client.js';
import { ManualClock, startServer, useOwner, useServer } from './helpers/server.js';
import { type ServiceUser, useServices } from './helpers/services.js';
import { type Change, noteOf, pullAll, push, share } from './helpers/sync.js';

const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;

describe('GET /api/sync', () => {
  const clock = new ManualClock(T0);
  const server = useServer({ clock });
  const owner = useOwner(server);

  it('requires since as an integer >= 0 (D-SYNC-1)', async () => {
    for (const query of ['', '?since=', '?since=-1', '?since=1.5', '?since=abc']) {
      const response = await owner.get(`/api/sync${query}`);
      assert.equal(response.status, 400, query);
      assert.equal(response.body.code, 'validation_failed');
    }
  });

  it('answers 401 without a session', async () => {
    const response = await clientOf(server).get('/api/sync?since=0');
    assert.equal(response.status, 401);
  });

  it('returns active, archived and trashed notes changed at or after since, with tags and X-Sync-Time', async () => {
    clock.advance(1000);
    const before = clock.now();
    const active = (await owner.post('/api/notes', { title: 'groceries #home' })).body;
    const archived = (await owner.post('/api/notes', { title: 'old', archived: true })).body;
    const trashed = (await owner.post('/api/notes', { title: 'gone', trashed: true })).body;
    const response = await owner.get(`/api/sync?since=${before}`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-sync-time'), String(before));
    const ids = response.body.map((n: any) => n.id);
    assert.deepEqual(new Set(ids), new Set([active.id, archived.id, trashed.id]));
    const pulled = response.body.find((n: any) => n.id === active.id);
    assert.deepEqual(pulled.tags, ['home']);
    assert.deepEqual(pulled.attachments, []);
    assert.equal(pulled.version, 1);
  });

  it('passes X-Sync-Time as the next since: later changes come, older ones do not', async () => {
    clock.advance(1000);
    const first = await owner.get('/api/sync?since=0');
    const next = Number(first.headers.get('x-sync-time'));
    clock.advance(1000);
    const note = (await owner.post('/api/notes', { title: 'later' })).body;
    const second = await owner.get(`/api/sync?since=${next}`);
    assert.deepEqual(
      second.body.map((n: any) => n.id),
      [note.id],
    );
  });

  it('includes a change stored at the very X-Sync-Time instant in the next pull (nothing missed)', async () => {
    clock.advance(1000);
    const first = await owner.get(`/api/sync?since=${clock.now()}`);
    const syncTime = Number(first.headers.get('x-sync-time'));
    const note = (await owner.post('/api/notes', { title: 'same millisecond' })).body;
    const second = await owner.get(`/api/sync?since=${syncTime}`);
    assert.ok(second.body.some((n: any) => n.id === note.id));
  });

  it('carries attachments, and an upload brings the note into the next pull (D-ATT-5)', async () => {
    const note = (await owner.post('/api/notes', { title: 'with a picture' })).body;
    clock.advance(1000);
    const since = clock.now();
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#3a7' } })
      .png()
      .toBuffer();
    const body = new FormData();
    body.append('file', new Blob([png], { type: 'image/png' }), 'dot.png');
    const upload = await owner.request('POST', `/api/notes/${note.id}/attachments`, { body });
    assert.equal(upload.status, 201, upload.text);
    const pulled = (await owner.get(`/api/sync?since=${since}`)).body;
    assert.deepEqual(
      pulled.map((n: any) => n.id),
      [note.id],
    );
    assert.equal(pulled[0].attachments[0].id, upload.body.id);
    assert.equal(pulled[0].version, 2);
  });

  it('accepts an API key with only notes:read for pulls (D-KEY-2)', async () => {
    const key = (await owner.post('/api/settings/api-keys', { name: 'reader', scopes: ['notes:read'] })).body
      .key;
    const response = await clientOf(server).get('/api/sync?since=0', {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(response.status, 200);
    assert.ok(response.body.length > 0);
  });

  it("never returns another user's notes, but returns notes shared with the caller (D-NOTE-5)", async () => {
    const other = await createUserClient(server, 'pull-other@example.com');
    const secret = (await owner.post('/api/notes', { title: 'secret' })).body;
    const shared = (await owner.post('/api/notes', { title: 'shared' })).body;
    const since = clock.now() + 1;
    clock.advance(5000);
    await share(owner, shared.id, other.userId);
    // Shared after `since` although last changed before it: the new collaborator still gets it.
    const response = await other.client.get(`/api/sync?since=${since}`);
    const ids = response.body.map((n: any) => n.id);
    assert.deepEqual(ids, [shared.id]);
    assert.ok(!ids.includes(secret.id));
  });
});

describe('GET /api/sync/deleted', () => {
  const clock = new ManualClock(T0);
  const server = useServer({ clock });
  const owner = useOwner(server);

  it('requires since as an integer >= 0', async () => {
    assert.equal((await owner.get('/api/sync/deleted')).status, 400);
    assert.equal((await owner.get('/api/sync/deleted?since=-5')).status, 400);
  });

  it('lists notes deleted at or after since with their deletion time (D-SYNC-3)', async () => {
    clock.advance(1000);
    const note = (await owner.post('/api/notes', { title: 'to delete' })).body;
    clock.advance(1000);
    const deletedAt = clock.now();
    assert.equal((await owner.delete(`/api/notes/${note.id}`)).status, 200);
    const response = await owner.get(`/api/sync/deleted?since=${deletedAt}`);
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, [{ id: note.id, deletedAt }]);
    assert.deepEqual((await owner.get(`/api/sync/deleted?since=${deletedAt + 1}`)).body, []);
  });

  it('tells every collaborator when the owner deletes a shared note', async () => {
    const other = await createUserClient(server, 'deleted-collab@example.com');
    const note = (await owner.post('/api/notes', { title: 'shared then deleted' })).body;
    await share(owner, note.id, other.userId);
    clock.advance(1000);
    const since = clock.now();
    await owner.delete(`/api/notes/${note.id}`);
    const theirs = (await other.client.get(`/api/sync/deleted?since=${since}`)).body;
    assert.deepEqual(
      theirs.map((t: any) => t.id),
      [note.id],
    );
  });

  it('does not list a note that was unshared and then shared again', async () => {
    const other = await createUserClient(server, 'reshared@example.com');
    const note = (await owner.post('/api/notes', { title: 'back and forth' })).body;
    await share(owner, note.id, other.userId);
    const since = clock.now();
    await push(other.client, [{ noteId: note.id, operation: 'delete', timestamp: since }]);
    assert.deepEqual(
      (await other.client.get(`/api/sync/deleted?since=${since}`)).body.map((t: any) => t.id),
      [note.id],
    );
    await share(owner, note.id, other.userId);
    assert.deepEqual((await other.client.get(`/api/sync/deleted?since=${since}`)).body, []);
  });

  it('answers 410 resync_required for a since older than the 90 days tombstones are kept', async () => {
    const response = await owner.get(`/api/sync/deleted?since=${clock.now() - 91 * DAY}`);
    assert.equal(response.status, 410);
    assert.equal(response.body.code, 'resync_required');
    // D-ERR-1: `error` is the status's reason phrase.
    assert.equal(response.body.error, 'Gone');
    assert.equal((await owner.get(`/api/sync/deleted?since=${clock.now() - 89 * DAY}`)).status, 200);
  });

  it('keeps tombstones for 90 days, then forgets them (D-SYNC-3)', async () => {
    const note = (await owner.post('/api/notes', { title: 'ancient' })).body;
    const deletedAt = clock.now();
    await owner.delete(`/api/notes/${note.id}`);
    clock.advance(89 * DAY);
    await server.app.services.sync.purgeExpiredTombstones();
    const kept = await server.app.db.selectFrom('note_tombstones').select('note_id').execute();
    assert.ok(kept.some((t) => t.note_id === note.id));
    clock.advance(2 * DAY);
    await server.app.services.sync.purgeExpiredTombstones();
    const fresh = clientOf(server);
    assert.equal((await fresh.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
    const response = await fresh.get(`/api/sync/deleted?since=${deletedAt - 1}`);
    assert.equal(response.status, 410);
    const rows = await server.app.db.selectFrom('note_tombstones').select('note_id').execute();
    assert.ok(!rows.some((t) => t.note_id === note.id));
  });
});

describe('maintenance job', () => {
  it('forgets tombstones older than 90 days at start-up (startMaintenance)', async () => {
    const clock = new ManualClock(T0);
    const first = await startServer({ clock });
    const owner = await setupOwner(first);
    const old = (await owner.post('/api/notes', { title: 'old' })).body;
    const recent = (await owner.post('/api/notes', { title: 'recent' })).body;
    await owner.delete(`/api/notes/${old.id}`);
    clock.advance(20 * DAY);
    await owner.delete(`/api/notes/${recent.id}`);
    await first.close({ keepData: true });
    clock.advance(75 * DAY);
    const second = await startServer({ clock, dataDir: first.dataDir });
    try {
      const rows = await second.app.db.selectFrom('note_tombstones').select('note_id').execute();
      assert.deepEqual(
        rows.map((r) => r.note_id),
        [recent.id],
      );
    } finally {
      await second.close();
    }
  });
});

describe('POST /api/sync: validation (D-SYNC-4, D-ERR-5)', () => {
  const server = useServer();
  const owner = useOwner(server);

  const valid = (): Change => ({
    noteId: randomUUID(),
    operation: 'create',
    timestamp: T0,
    data: { title: 'valid' },
  });

  const invalid: [string, unknown, string][] = [
    ['a noteId that is not a uuid', { ...valid(), noteId: 'nope' }, '/changes/1/noteId'],
    ['an unknown operation', { ...valid(), operation: 'upsert' }, '/changes/1/operation'],
    ['a negative timestamp', { ...valid(), timestamp: -1 }, '/changes/1/timestamp'],
    ['a fractional timestamp', { ...valid(), timestamp: 1.5 }, '/changes/1/timestamp'],
    ['a missing timestamp', { noteId: randomUUID(), operation: 'delete' }, '/changes/1/timestamp'],
    [
      'an update without data',
      { noteId: randomUUID(), operation: 'update', timestamp: 1 },
      '/changes/1/data',
    ],
    ['a create without data', { noteId: randomUUID(), operation: 'create', timestamp: 1 }, '/changes/1/data'],
    ['an unknown color', { ...valid(), data: { color: 'plaid' } }, '/changes/1/data/color'],
    ['a title too long', { ...valid(), data: { title: 'x'.repeat(1001) } }, '/changes/1/data/title'],
    ['a string boolean', { ...valid(), data: { pinned: 'true' } }, '/changes/1/data/pinned'],
    ['a negative baseVersion', { ...valid(), baseVersion: -1 }, '/changes/1/baseVersion'],
  ];
  for (const [what, change, path] of invalid) {
    it(`answers 400 naming the index for ${what}, and applies nothing`, async () => {
      const first = valid();
      const response = await owner.post('/api/sync', { changes: [first, change] });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'validation_failed');
      assert.equal(response.body.details[0].path, path);
      assert.match(response.body.message, /\/changes\/1/);
      assert.equal(await noteOf(owner, first.noteId), undefined);
    });
  }

  it('answers 400 when changes is missing or not an array', async () => {
    assert.equal((await owner.post('/api/sync', {})).status, 400);
    assert.equal((await owner.post('/api/sync', { changes: 'all' })).status, 400);
  });

  it('accepts 1,000 changes and refuses 1,001 (D-ERR-5)', async () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({
      noteId: randomUUID(),
      operation: 'delete' as const,
      timestamp: i,
    }));
    assert.equal((await owner.post('/api/sync', { changes: many })).status, 200);
    const tooMany = await owner.post('/api/sync', { changes: [...many, valid()] });
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.code, 'validation_failed');
  });

  it('accepts a body over 2 MiB and answers 413 over 16 MiB', async () => {
    const big = 'x'.repeat(900_000);
    const changes = [1, 2, 3].map((n) => ({ ...valid(), timestamp: n, data: { content: big } }));
    assert.equal((await owner.post('/api/sync', { changes })).status, 200);
    const huge = Array.from({ length: 20 }, (_, n) => ({ ...valid(), timestamp: n, data: { content: big } }));
    const response = await owner.post('/api/sync', { changes: huge });
    assert.equal(response.status, 413);
    assert.equal(response.body.code, 'payload_too_large');
  });

  it('answers 401 without a session', async () => {
    assert.equal((await clientOf(server).post('/api/sync', { changes: [] })).status, 401);
  });

  it('answers 403 insufficient_scope to a read-only API key and applies nothing (D-KEY-3)', async () => {
    const key = (await owner.post('/api/settings/api-keys', { name: 'reader', scopes: ['notes:read'] })).body
      .key;
    const change = valid();
    const response = await clientOf(server).post(
      '/api/sync',
      { changes: [change] },
      { headers: { authorization: `Bearer ${key}` } },
    );
    assert.equal(response.status, 403);
    assert.equal(response.body.code, 'insufficient_scope');
    assert.equal(await noteOf(owner, change.noteId), undefined);
  });
});

describe('sync service push: applying changes', () => {
  const clock = new ManualClock(T0 + 10 * DAY);
  const tier = useServices({ clock });
  let owner: ServiceUser;
  let other: ServiceUser;
  before(async () => {
    owner = tier.owner;
    other = await tier.addUser('apply-other@example.com');
  });

  it('creates a note with the given id; the rest takes defaults (D-NOTE-1)', async () => {
    const id = randomUUID();
    const results = await tier.push(owner, [
      { noteId: id, operation: 'create', timestamp: T0, data: { title: 'from phone', pinned: true } },
    ]);
    assert.deepEqual(results, [{ noteId: id, status: 'applied', version: 1 }]);
    const note = await tier.readNote(owner, id);
    assert.equal(note.title, 'from phone');
    assert.equal(note.pinned, true);
    assert.equal(note.color, 'default');
    assert.equal(note.version, 1);
  });

  it("stamps updatedAt with the server's clock, never the change's timestamp (D-SYNC-2)", async () => {
    const id = randomUUID();
    await tier.push(owner, [{ noteId: id, operation: 'create', timestamp: T0 + 999 * DAY, data: {} }]);
    const note = await tier.readNote(owner, id);
    assert.equal(note.updatedAt, new Date(clock.now()).toISOString());
  });

  it('treats a create of an existing note as an update, so a retried push changes nothing (D-SYNC-6)', async () => {
    const id = randomUUID();
    const changes: Change[] = [{ noteId: id, operation: 'create', timestamp: T0, data: { title: 'once' } }];
    await tier.push(owner, changes);
    clock.advance(1000);
    const results = await tier.push(owner, changes);
    assert.deepEqual(results, [{ noteId: id, status: 'applied', version: 1 }]);
    const note = await tier.readNote(owner, id);
    assert.equal(note.version, 1);
    assert.equal(note.updatedAt, new Date(clock.now() - 1000).toISOString());
  });

  it('adds exactly 1 to version per applied change that changes something (D-NOTE-3)', async () => {
    const id = randomUUID();
    await tier.push(owner, [
      { noteId: id, operation: 'create', timestamp: T0, data: { title: 'v1' } },
      { noteId: id, operation: 'update', timestamp: T0 + 1, data: { title: 'v2' } },
      { noteId: id, operation: 'update', timestamp: T0 + 2, data: { title: 'v2' } },
      { noteId: id, operation: 'update', timestamp: T0 + 3, data: { color: 'mint', pinned: true } },
    ]);
    assert.equal((await tier.readNote(owner, id)).version, 3);
  });

  it('keeps edits of different fields made offline on two devices (D-SYNC-5)', async () => {
    const id = randomUUID();
    await tier.push(owner, [
      { noteId: id, operation: 'create', timestamp: T0, data: { title: 't', content: 'c' } },
    ]);
    await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 20, data: { title: 'phone title' } },
    ]);
    await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 10, data: { content: 'laptop content' } },
    ]);
    const note = await tier.readNote(owner, id);
    assert.equal(note.title, 'phone title');
    assert.equal(note.content, 'laptop content');
  });

  it('skips a stale update of a field changed later, as reason stale (D-SYNC-5)', async () => {
    const id = randomUUID();
    await tier.push(owner, [{ noteId: id, operation: 'create', timestamp: T0, data: { color: 'coral' } }]);
    await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 20, data: { color: 'mint' } },
    ]);
    const results = await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 10, data: { color: 'sand' } },
    ]);
    assert.deepEqual(results, [{ noteId: id, status: 'skipped', reason: 'stale', version: 2 }]);
    assert.equal((await tier.readNote(owner, id)).color, 'mint');
  });

  it("counts a REST edit (notes.update) at the server's clock: an older sync change loses to it", async () => {
    const id = randomUUID();
    await tier.push(owner, [{ noteId: id, operation: 'create', timestamp: T0, data: { pinned: false } }]);
    await tier.services.notes.update(owner.actor, id, { pinned: true });
    const results = await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: clock.now() - 1, data: { pinned: false } },
    ]);
    assert.equal(results[0]!.reason, 'stale');
    assert.equal((await tier.readNote(owner, id)).pinned, true);
  });

  it('applies changes in ascending timestamp order, ties in array order, and answers in array order', async () => {
    const id = randomUUID();
    const changes: Change[] = [
      { noteId: id, operation: 'update', timestamp: T0 + 30, data: { title: 'last' } },
      { noteId: id, operation: 'create', timestamp: T0 + 10, data: { title: 'first' } },
      { noteId: id, operation: 'update', timestamp: T0 + 20, data: { color: 'sage' } },
      { noteId: id, operation: 'update', timestamp: T0 + 20, data: { color: 'fog' } },
    ];
    const results = await tier.push(owner, changes);
    assert.deepEqual(
      results.map((r) => r.status),
      ['applied', 'applied', 'applied', 'applied'],
    );
    const note = await tier.readNote(owner, id);
    assert.equal(note.title, 'last');
    assert.equal(note.color, 'fog');
    // The same batch pushed again changes nothing, ties included (D-SYNC-5).
    await tier.push(owner, changes);
    assert.equal((await tier.readNote(owner, id)).version, note.version);
  });

  it('creates the note when an update arrives before its create', async () => {
    const id = randomUUID();
    await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 20, data: { title: 'later title' } },
    ]);
    await tier.push(owner, [
      { noteId: id, operation: 'create', timestamp: T0 + 10, data: { title: 'first', color: 'dusk' } },
    ]);
    const note = await tier.readNote(owner, id);
    assert.equal(note.title, 'later title');
    // A field the early update did not set is still open to the later-arriving create.
    assert.equal(note.color, 'dusk');
  });

  it('trashing through sync stamps trashedAt (D-NOTE-4) and archiving sets archived', async () => {
    const id = randomUUID();
    await tier.push(owner, [
      { noteId: id, operation: 'create', timestamp: T0, data: {} },
      { noteId: id, operation: 'update', timestamp: T0 + 1, data: { archived: true } },
      { noteId: id, operation: 'update', timestamp: T0 + 2, data: { trashed: true } },
    ]);
    const note = await tier.readNote(owner, id);
    assert.equal(note.archived, true);
    assert.equal(note.trashedAt, new Date(clock.now()).toISOString());
  });

  it('deletes a note for good when the owner pushes delete, leaving a tombstone', async () => {
    const id = randomUUID();
    await tier.push(owner, [{ noteId: id, operation: 'create', timestamp: T0, data: { title: 'x' } }]);
    const since = clock.now();
    assert.deepEqual(await tier.push(owner, [{ noteId: id, operation: 'delete', timestamp: T0 + 1 }]), [
      { noteId: id, status: 'applied' },
    ]);
    assert.equal(await tier.noteOf(owner, id), undefined);
    const deleted = await tier.deletedSince(owner, since);
    assert.ok(deleted.some((t: any) => t.id === id));
  });

  it('recomputes tags when a sync change edits title or content (D-TAG-2)', async () => {
    const id = randomUUID();
    await tier.push(owner, [
      { noteId: id, operation: 'create', timestamp: T0, data: { title: 'plan #work' } },
      { noteId: id, operation: 'update', timestamp: T0 + 1, data: { content: 'see #home' } },
    ]);
    assert.deepEqual((await tier.readNote(owner, id)).tags, ['home', 'work']);
  });

  it('tells the collaborators too when the owner deletes a shared note through sync', async () => {
    const note = await tier.createNote(owner, { title: 'shared, then deleted by sync' });
    await tier.share(owner, note.id, other.userId);
    const since = clock.now();
    await tier.push(owner, [{ noteId: note.id, operation: 'delete', timestamp: T0 }]);
    const theirs = await tier.deletedSince(other, since);
    assert.ok(theirs.some((t: any) => t.id === note.id));
  });

  it('lets delete win: a later update or create of a deleted note is skipped as deleted (D-SYNC-6)', async () => {
    const id = randomUUID();
    await tier.push(owner, [{ noteId: id, operation: 'create', timestamp: T0, data: { title: 'x' } }]);
    await tier.push(owner, [{ noteId: id, operation: 'delete', timestamp: T0 + 1 }]);
    const results = await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 50, data: { title: 'too late' } },
      { noteId: id, operation: 'create', timestamp: T0 + 60, data: { title: 'again' } },
    ]);
    assert.deepEqual(results, [
      { noteId: id, status: 'skipped', reason: 'deleted' },
      { noteId: id, status: 'skipped', reason: 'deleted' },
    ]);
    assert.equal(await tier.noteOf(owner, id), undefined);
  });

  it('treats a delete of an unknown note, or a repeated delete, as a no-op', async () => {
    const id = randomUUID();
    const results = await tier.push(owner, [
      { noteId: id, operation: 'delete', timestamp: T0 },
      { noteId: id, operation: 'delete', timestamp: T0 },
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['applied', 'applied'],
    );
  });

  it("skips create, update and delete of another user's note as forbidden and changes nothing", async () => {
    const theirs = await tier.createNote(other, { title: 'mine alone' });
    const results = await tier.push(owner, [
      { noteId: theirs.id, operation: 'create', timestamp: T0 + 99 * DAY, data: { title: 'hijack' } },
      { noteId: theirs.id, operation: 'update', timestamp: T0 + 99 * DAY, data: { title: 'hijack' } },
      { noteId: theirs.id, operation: 'delete', timestamp: T0 + 99 * DAY },
    ]);
    assert.deepEqual(
      results.map((r) => r.reason),
      ['forbidden', 'forbidden', 'forbidden'],
    );
    const still = await tier.readNote(other, theirs.id);
    assert.equal(still.title, 'mine alone');
    assert.equal(still.version, 1);
  });

  it('lets a collaborator edit a shared note, and their delete only removes their own access', async () => {
    const note = await tier.createNote(owner, { title: 'shared list' });
    await tier.share(owner, note.id, other.userId);
    const edit = await tier.push(other, [
      { noteId: note.id, operation: 'update', timestamp: clock.now() + 1, data: { content: 'milk' } },
    ]);
    assert.equal(edit[0]!.status, 'applied');
    const since = clock.now();
    const leave = await tier.push(other, [{ noteId: note.id, operation: 'delete', timestamp: clock.now() }]);
    assert.equal(leave[0]!.status, 'applied');
    const kept = await tier.readNote(owner, note.id);
    assert.equal(kept.content, 'milk');
    assert.equal(await tier.noteOf(other, note.id), undefined);
    const theirTombstones = await tier.deletedSince(other, since);
    assert.ok(theirTombstones.some((t: any) => t.id === note.id));
    const ownerTombstones = await tier.deletedSince(owner, since);
    assert.ok(!ownerTombstones.some((t: any) => t.id === note.id));
  });

  // The push reads its notes once and keeps them current as it writes: these pin that a change
  // sees what the earlier changes of the same batch did (D-SYNC-4).
  it('skips an update after the delete of its note in the same batch as deleted (D-SYNC-6)', async () => {
    const id = randomUUID();
    const results = await tier.push(owner, [
      { noteId: id, operation: 'create', timestamp: T0 + 1, data: { title: 'brief' } },
      { noteId: id, operation: 'delete', timestamp: T0 + 2 },
      { noteId: id, operation: 'update', timestamp: T0 + 3, data: { title: 'after' } },
    ]);
    assert.deepEqual(results, [
      { noteId: id, status: 'applied', version: 1 },
      { noteId: id, status: 'applied' },
      { noteId: id, status: 'skipped', reason: 'deleted' },
    ]);
    assert.equal(await tier.noteOf(owner, id), undefined);
  });

  it('skips as forbidden an edit a collaborator pushes after leaving the note in the same batch', async () => {
    const note = await tier.createNote(owner, { title: 'shared', content: 'as it was' });
    await tier.share(owner, note.id, other.userId);
    const results = await tier.push(other, [
      { noteId: note.id, operation: 'delete', timestamp: clock.now() + 1 },
      { noteId: note.id, operation: 'update', timestamp: clock.now() + 2, data: { content: 'sneaky' } },
    ]);
    assert.deepEqual(
      results.map((r) => r.reason ?? r.status),
      ['applied', 'forbidden'],
    );
    assert.equal((await tier.readNote(owner, note.id)).content, 'as it was');
  });
});

describe('sync service push: conflict copies (D-SYNC-8)', () => {
  const clock = new ManualClock(T0 + 10 * DAY);
  const tier = useServices({ clock });
  let owner: ServiceUser;
  before(() => {
    owner = tier.owner;
  });

  async function noteWithTitle(title: string, content = 'body') {
    const id = randomUUID();
    await tier.push(owner, [{ noteId: id, operation: 'create', timestamp: T0, data: { title, content } }]);
    return id;
  }

  it('keeps a stale title as a copy owned by the pusher, named in the result', async () => {
    const id = await noteWithTitle('Plan');
    await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 20, data: { title: 'Plan B' } },
    ]);
    const results = await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 10, data: { title: 'Plan A' } },
    ]);
    assert.equal(results[0]!.status, 'skipped');
    assert.equal(results[0]!.reason, 'stale');
    const copy = await tier.readNote(owner, results[0]!.conflictCopyId!);
    assert.equal(copy.title, `Plan A (conflict ${new Date(T0 + 10).toISOString()})`);
    assert.equal(copy.content, 'body');
    assert.equal((await tier.readNote(owner, id)).title, 'Plan B');
  });

  it('makes no second copy when the same batch is pushed again', async () => {
    const id = await noteWithTitle('n', 'first words');
    await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 20, data: { content: 'newest' } },
    ]);
    const batch: Change[] = [
      { noteId: id, operation: 'update', timestamp: T0 + 10, data: { content: 'older' } },
    ];
    const first = await tier.push(owner, batch);
    const count = (await tier.pullAll(owner)).length;
    const second = await tier.push(owner, batch);
    assert.equal(second[0]!.conflictCopyId, first[0]!.conflictCopyId);
    assert.equal((await tier.pullAll(owner)).length, count);
    const copy = await tier.readNote(owner, first[0]!.conflictCopyId!);
    assert.equal(copy.content, 'older');
    assert.equal(copy.title, `n (conflict ${new Date(T0 + 10).toISOString()})`);
  });

  it('does not bring back a copy the user deleted when the batch is pushed again', async () => {
    const id = await noteWithTitle('n', 'a');
    await tier.push(owner, [{ noteId: id, operation: 'update', timestamp: T0 + 20, data: { content: 'b' } }]);
    const batch: Change[] = [{ noteId: id, operation: 'update', timestamp: T0 + 10, data: { content: 'c' } }];
    const [result] = await tier.push(owner, batch);
    await tier.services.notes.remove(owner.actor, result!.conflictCopyId!);
    await tier.push(owner, batch);
    assert.equal(await tier.noteOf(owner, result!.conflictCopyId!), undefined);
  });

  it('with baseVersion, keeps the text someone else stored after it when this change wins', async () => {
    const id = await noteWithTitle('n', 'seen by both');
    // Device A saw version 1, then device B changed the content (version 2).
    await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 10, baseVersion: 1, data: { content: 'B text' } },
    ]);
    // Device A, whose edit is later by the clock, pushes on top of version 1: it wins, B's text is kept.
    const [result] = await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 20, baseVersion: 1, data: { content: 'A text' } },
    ]);
    assert.equal(result!.status, 'applied');
    assert.equal((await tier.readNote(owner, id)).content, 'A text');
    const copy = await tier.readNote(owner, result!.conflictCopyId!);
    assert.equal(copy.content, 'B text');
    assert.equal(copy.title, `n (conflict ${new Date(T0 + 10).toISOString()})`);
  });

  it('without baseVersion, makes no copy when the change wins', async () => {
    const id = await noteWithTitle('n', 'x');
    await tier.push(owner, [{ noteId: id, operation: 'update', timestamp: T0 + 10, data: { content: 'B' } }]);
    const [result] = await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 20, data: { content: 'A' } },
    ]);
    assert.deepEqual(result, { noteId: id, status: 'applied', version: 3 });
  });

  it('with baseVersion equal to the current version, makes no copy', async () => {
    const id = await noteWithTitle('n', 'x');
    await tier.push(owner, [{ noteId: id, operation: 'update', timestamp: T0 + 10, data: { content: 'B' } }]);
    const [result] = await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 20, baseVersion: 2, data: { content: 'A' } },
    ]);
    assert.equal(result!.conflictCopyId, undefined);
  });

  it('makes no copy when the losing text equals the stored one or is a non-text field', async () => {
    const id = await noteWithTitle('same', 'x');
    await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 20, data: { title: 'same!', color: 'mint' } },
    ]);
    const [result] = await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 10, data: { title: 'same!', color: 'clay' } },
    ]);
    assert.deepEqual(result, { noteId: id, status: 'skipped', reason: 'stale', version: 2 });
  });

  it("makes no copy of a device's own text that its later change in the same batch replaced", async () => {
    const id = randomUUID();
    const batch: Change[] = [
      { noteId: id, operation: 'create', timestamp: T0 + 1, data: { title: 'draft 1' } },
      { noteId: id, operation: 'update', timestamp: T0 + 2, baseVersion: 1, data: { title: 'draft 2' } },
      { noteId: id, operation: 'update', timestamp: T0 + 3, baseVersion: 1, data: { title: 'draft 3' } },
    ];
    const count = (await tier.pullAll(owner)).length;
    const first = await tier.push(owner, batch);
    const again = await tier.push(owner, batch);
    for (const result of [...first, ...again]) assert.equal(result.conflictCopyId, undefined);
    assert.equal((await tier.pullAll(owner)).length, count + 1);
    assert.equal((await tier.readNote(owner, id)).title, 'draft 3');
  });

  it("gives a collaborator's losing text to the note's owner, shared like the note (D-SYNC-8)", async () => {
    const collaborator = await tier.addUser('copy-collab@example.com');
    const bystander = await tier.addUser('copy-bystander@example.com');
    const id = await noteWithTitle('ours', 'owner text');
    await tier.share(owner, id, collaborator.userId);
    await tier.share(owner, id, bystander.userId);
    await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 20, data: { content: 'owner new' } },
    ]);
    const batch: Change[] = [
      { noteId: id, operation: 'update', timestamp: T0 + 10, data: { content: 'collab text' } },
    ];
    const [result] = await tier.push(collaborator, batch);
    const copyId = result!.conflictCopyId!;
    for (const reader of [owner, collaborator, bystander]) {
      const copy = await tier.readNote(reader, copyId);
      assert.equal(copy.ownerId, (await tier.readNote(owner, id)).ownerId);
      assert.equal(copy.content, 'collab text');
    }
    const collaborators = await tier.services.collaborators.list(owner.actor, copyId);
    assert.deepEqual(
      collaborators.map((c: { userId: number }) => c.userId).sort(),
      [collaborator.userId, bystander.userId].sort(),
    );
    const again = await tier.push(collaborator, batch);
    assert.equal(again[0]!.conflictCopyId, copyId);
    assert.equal((await tier.pullAll(owner)).filter((n) => n.id === copyId).length, 1);
  });

  it('never shows a conflict copy to someone who cannot see the note', async () => {
    const collaborator = await tier.addUser('copy-collab-2@example.com');
    const stranger = await tier.addUser('copy-stranger@example.com');
    const id = await noteWithTitle('private', 'owner text');
    await tier.share(owner, id, collaborator.userId);
    await tier.push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 20, data: { content: 'new' } },
    ]);
    const [result] = await tier.push(collaborator, [
      { noteId: id, operation: 'update', timestamp: T0 + 10, data: { content: 'lost' } },
    ]);
    assert.equal(await tier.noteOf(stranger, result!.conflictCopyId!), undefined);
    await assert.rejects(tier.services.notes.get(stranger.actor, result!.conflictCopyId!), {
      statusCode: 404,
    });
  });
});

describe('GET /api/sync with 1,000 notes or more', () => {
  const server = useServer();
  const owner = useOwner(server);

  // The pull is written batch by batch (src/http/jsonArray.ts), not as one serialized array, so
  // the answer must still carry exactly the Note fields, each as GET /api/notes/{id} gives it.
  it('answers each note exactly as GET /api/notes/{id} does', async () => {
    const now = Date.now();
    const changes: Change[] = Array.from({ length: 1_000 }, (_, i) => ({
      noteId: randomUUID(),
      operation: 'create',
      timestamp: now + i,
      data: { title: `Note ${i} "quoted"`, content: `#tag${i % 3} line\nnext ✓`, trashed: i % 10 === 0 },
    }));
    const results = await push(owner, changes);
    assert.ok(results.every((r) => r.status === 'applied'));
    const pulled = await pullAll(owner);
    assert.equal(pulled.length, 1_000);
    for (const index of [0, 1, 2, 500, 999]) {
      const pulledNote = pulled.find((n) => n.id === changes[index]!.noteId);
      const single = await noteOf(owner, changes[index]!.noteId);
      assert.deepEqual(pulledNote, single);
      assert.deepEqual(Object.keys(pulledNote), Object.keys(single));
    }
  });
});
