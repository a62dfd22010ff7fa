import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { NoteRevision } from '../src/features/revisions/schemas.js';
import { createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { ManualClock, startServer, type TestServer } from './helpers/server.js';
import { type Change, noteOf, type PushResult, pullAll, push, share } from './helpers/sync.js';

/**
 * Push rules a client relies on to keep edits: same-value writes count (D-SYNC-5), results carry
 * the note's version (D-SYNC-7), content is merged line by line against the base (D-SYNC-9).
 */

const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;

function update(noteId: string, timestamp: number, data: Change['data'], baseVersion?: number): Change {
  return { noteId, operation: 'update', timestamp, data, ...(baseVersion !== undefined && { baseVersion }) };
}

async function pushOne(client: TestClient, change: Change): Promise<PushResult> {
  return (await push(client, [change]))[0]!;
}

let server: TestServer;
let owner: TestClient;
let collaborator: { client: TestClient; userId: number };
const clock = new ManualClock(T0 + 10 * DAY);
before(async () => {
  server = await startServer({ clock });
  owner = await setupOwner(server);
  collaborator = await createUserClient(server, 'trust-collab@example.com');
});
after(() => server.close());

describe('POST /api/sync: a write of the value a field holds still counts (D-SYNC-5)', () => {
  it('lets an older write arriving later lose to a newer write of the same value', async () => {
    const id = randomUUID();
    await push(owner, [{ noteId: id, operation: 'create', timestamp: 1000, data: { pinned: false } }]);
    const before = await noteOf(owner, id);
    clock.advance(1000);
    // Device P: pinned false at 1568 (the value it already has). Device L: pinned true at 1483.
    const [fromP] = await push(owner, [
      { noteId: id, operation: 'update', timestamp: 1568, data: { pinned: false } },
    ]);
    assert.equal(fromP!.status, 'applied');
    const [fromL] = await push(owner, [
      { noteId: id, operation: 'update', timestamp: 1483, data: { pinned: true } },
    ]);
    assert.deepEqual(fromL, { noteId: id, status: 'skipped', reason: 'stale', version: 1 });
    const after = await noteOf(owner, id);
    assert.equal(after.pinned, false);
    // D-NOTE-3: the same-value write changed no value, so neither version nor updatedAt.
    assert.equal(after.version, before.version);
    assert.equal(after.updatedAt, before.updatedAt);
  });

  it("counts a REST write of the same value at the server's clock", async () => {
    const id = randomUUID();
    await push(owner, [{ noteId: id, operation: 'create', timestamp: T0, data: { color: 'mint' } }]);
    await owner.patch(`/api/notes/${id}`, { color: 'mint' });
    const [result] = await push(owner, [
      { noteId: id, operation: 'update', timestamp: clock.now() - 1, data: { color: 'coral' } },
    ]);
    assert.equal(result!.reason, 'stale');
    assert.equal((await noteOf(owner, id)).color, 'mint');
  });
});

describe('POST /api/sync: results carry the version (D-SYNC-7)', () => {
  it("gives the note's version after an applied or stale change", async () => {
    const id = randomUUID();
    const results = await push(owner, [
      { noteId: id, operation: 'create', timestamp: T0, data: { title: 'v1' } },
      { noteId: id, operation: 'update', timestamp: T0 + 2, data: { title: 'v2' } },
      { noteId: id, operation: 'update', timestamp: T0 + 3, data: { color: 'sage' } },
      { noteId: id, operation: 'update', timestamp: T0 + 4, data: { color: 'sage' } },
    ]);
    assert.deepEqual(
      results.map((r) => [r.status, r.version]),
      [
        ['applied', 1],
        ['applied', 2],
        ['applied', 3],
        ['applied', 3],
      ],
    );
    const [stale] = await push(owner, [
      { noteId: id, operation: 'update', timestamp: T0 + 1, data: { color: 'coral' } },
    ]);
    assert.deepEqual(stale, { noteId: id, status: 'skipped', reason: 'stale', version: 3 });
    assert.equal((await noteOf(owner, id)).version, 3);
  });

  it('gives no version when the note is gone or hidden from the pusher', async () => {
    const mine = randomUUID();
    const theirs = randomUUID();
    const shared = (await owner.post('/api/notes', { title: 'shared' })).body.id;
    await share(owner, shared, collaborator.userId);
    await push(collaborator.client, [{ noteId: theirs, operation: 'create', timestamp: T0, data: {} }]);
    const results = await push(owner, [
      { noteId: mine, operation: 'create', timestamp: T0, data: {} },
      { noteId: mine, operation: 'delete', timestamp: T0 + 1 },
      { noteId: mine, operation: 'update', timestamp: T0 + 2, data: { title: 'late' } },
      { noteId: theirs, operation: 'update', timestamp: T0 + 3, data: { title: 'not mine' } },
    ]);
    assert.deepEqual(
      results.map((r) => r.version),
      [1, undefined, undefined, undefined],
    );
    const [left] = await push(collaborator.client, [{ noteId: shared, operation: 'delete', timestamp: T0 }]);
    assert.deepEqual(left, { noteId: shared, status: 'applied' });
  });

  it('lets a device that moves its baseVersion by the answer push twice without a copy of its own text', async () => {
    const id = randomUUID();
    const [created] = await push(owner, [
      { noteId: id, operation: 'create', timestamp: T0, data: { content: 'draft' } },
    ]);
    const first = await pushOne(owner, update(id, T0 + 1, { content: 'first edit' }, created!.version));
    // Made while the first edit was in flight, on top of it: base moves to the acknowledged version.
    const second = await pushOne(owner, update(id, T0 + 2, { content: 'second edit' }, first.version));
    assert.equal(second.conflictCopyId, undefined);
    assert.equal((await noteOf(owner, id)).content, 'second edit');
  });
});

describe('POST /api/sync: three-way merge of content (D-SYNC-9)', () => {
  const list = '- [ ] milk\n- [ ] bread\n- [ ] eggs';
  const tick = (content: string, item: string) => content.replace(`[ ] ${item}`, `[x] ${item}`);

  /** A checklist of the owner at version 1, shared with the collaborator. */
  async function sharedList(): Promise<string> {
    const id = randomUUID();
    await push(owner, [
      { noteId: id, operation: 'create', timestamp: T0, data: { title: 'Shopping', content: list } },
    ]);
    await share(owner, id, collaborator.userId);
    return id;
  }

  /** An offline edit made on top of version 1. */
  const editOfVersion1 = (noteId: string, timestamp: number, data: Record<string, unknown>) =>
    update(noteId, timestamp, data, 1);

  for (const [order, ownerAt, collaboratorAt] of [
    ['the later edit arrives last', T0 + 20, T0 + 10],
    ['the older edit arrives last', T0 + 10, T0 + 20],
  ] as const) {
    it(`keeps both ticks of one checklist made from the same version, with no copy (${order})`, async () => {
      const id = await sharedList();
      const notesBefore = (await pullAll(collaborator.client)).length;
      const fromCollaborator = await pushOne(
        collaborator.client,
        editOfVersion1(id, collaboratorAt, { content: tick(list, 'bread') }),
      );
      // The first push stored its text as sent: no `merged`. The second one's was merged.
      assert.deepEqual(fromCollaborator, { noteId: id, status: 'applied', version: 2 });
      const fromOwner = await pushOne(owner, editOfVersion1(id, ownerAt, { content: tick(list, 'milk') }));
      assert.deepEqual(fromOwner, { noteId: id, status: 'applied', version: 3, merged: true });
      const merged = '- [x] milk\n- [x] bread\n- [ ] eggs';
      assert.equal((await noteOf(owner, id)).content, merged);
      // `merged` tells the client to read the text at that version (docs/sync.md): it is the merge.
      const revisions = (await owner.get(`/api/notes/${id}/revisions`)).body as NoteRevision[];
      assert.equal(revisions.find((r) => r.version === fromOwner.version)?.content, merged);
      assert.equal((await pullAll(collaborator.client)).length, notesBefore);
    });
  }

  it('stamps the merged content with the newer side, so an older write loses to it', async () => {
    const id = await sharedList();
    await pushOne(collaborator.client, editOfVersion1(id, T0 + 30, { content: tick(list, 'eggs') }));
    await pushOne(owner, editOfVersion1(id, T0 + 10, { content: tick(list, 'milk') }));
    const merged = '- [x] milk\n- [ ] bread\n- [x] eggs';
    assert.equal((await noteOf(owner, id)).content, merged);
    const older = await pushOne(owner, update(id, T0 + 20, { content: 'written at 20' }));
    assert.equal(older.reason, 'stale');
    assert.equal((await noteOf(owner, id)).content, merged);
  });

  it('changes nothing when the merging batch is pushed again', async () => {
    const id = await sharedList();
    await pushOne(collaborator.client, editOfVersion1(id, T0 + 10, { content: tick(list, 'bread') }));
    const change = editOfVersion1(id, T0 + 20, { content: tick(list, 'milk') });
    const first = await pushOne(owner, change);
    const again = await pushOne(owner, change);
    assert.equal(again.version, first.version);
    assert.equal(again.conflictCopyId, undefined);
    assert.equal((await noteOf(owner, id)).content, '- [x] milk\n- [x] bread\n- [ ] eggs');
  });

  it('keeps whole-text last writer wins and a copy when both changed the same line', async () => {
    const id = await sharedList();
    const oatMilk = list.replace('milk', 'oat milk');
    await pushOne(collaborator.client, editOfVersion1(id, T0 + 10, { content: oatMilk }));
    const fromOwner = await pushOne(owner, editOfVersion1(id, T0 + 20, { content: tick(list, 'milk') }));
    assert.equal((await noteOf(owner, id)).content, tick(list, 'milk'));
    assert.equal((await noteOf(collaborator.client, fromOwner.conflictCopyId!)).content, oatMilk);
  });

  it('does not merge when the base revision is not known', async () => {
    const id = await sharedList();
    await pushOne(collaborator.client, editOfVersion1(id, T0 + 10, { content: tick(list, 'bread') }));
    await server.app.db
      .deleteFrom('note_revisions')
      .where('note_id', '=', id)
      .where('version', '=', 1)
      .execute();
    const fromOwner = await pushOne(owner, editOfVersion1(id, T0 + 20, { content: tick(list, 'milk') }));
    assert.equal((await noteOf(owner, id)).content, tick(list, 'milk'));
    assert.ok(fromOwner.conflictCopyId);
  });

  it('treats a title as one line: both changed it, so the newer wins and the other is copied', async () => {
    const id = await sharedList();
    await pushOne(collaborator.client, editOfVersion1(id, T0 + 10, { title: 'Groceries' }));
    const fromOwner = await pushOne(owner, editOfVersion1(id, T0 + 20, { title: 'Market' }));
    assert.equal((await noteOf(owner, id)).title, 'Market');
    assert.match((await noteOf(owner, fromOwner.conflictCopyId!)).title, /^Groceries \(conflict /);
  });
});
