import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_SYNC_CHANGES } from '../src/shared/api/limits.js';
import type { ServerNote, SyncEngine, SyncNotice } from '../web/src/sync/index.js';
import { eventually } from './helpers/browser.js';
import { createUserClient, NEW_NOTE_ID, OWNER_PASSWORD, type TestClient } from './helpers/client.js';
import { ManualClock, useOwner, useServer } from './helpers/server.js';
import { pullAll, share } from './helpers/sync.js';
import {
  channelHub,
  fakeLocks,
  fetchAs,
  ManualTimers,
  nextEvent,
  openDevice,
  recordingFetch,
  syncFinished,
  userIdOf,
} from './web-sync-helpers.js';

/**
 * The web app's sync engine (web/src/sync, issue 13 "Offline sync engine") on simulated devices,
 * each with its own fake IndexedDB, against the real server. A device is "offline" simply by
 * not syncing; tests call syncNow() instead of waiting for timers (the timers have their own
 * tests with hand-run timers).
 */

const FIELDS = [
  'title',
  'content',
  'color',
  'pinned',
  'archived',
  'trashed',
  'checklistMode',
  'sortOrder',
  'version',
];

/** The device shows exactly the server's notes for its user, nothing pending. */
async function assertConverged(engine: SyncEngine, client: TestClient) {
  const server = await pullAll(client);
  const local = engine.notes();
  assert.deepEqual([...local.keys()].sort(), server.map((note) => note.id).sort());
  for (const note of server) {
    const view = local.get(note.id)!;
    assert.equal(view.pending, false, `${note.id} still pending`);
    for (const field of FIELDS) assert.deepEqual((view as any)[field], note[field], `${note.id}.${field}`);
  }
  assert.equal(engine.status().waiting, 0);
}

/** Collects the notices a device reports. */
function noticesOf(engine: SyncEngine): SyncNotice[] {
  const notices: SyncNotice[] = [];
  engine.subscribe((event) => {
    if (event.notice) notices.push(event.notice);
  });
  return notices;
}

describe('web sync engine: outbox and push', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('creates a note offline, pushes it, and a second device pulls it', async () => {
    const userId = await userIdOf(owner);
    const phone = await openDevice(owner, userId);
    const laptop = await openDevice(owner, userId);
    const note = await phone.engine.create({ title: 'Trip', content: '- [ ] passport' });
    // Made offline, its id grows with time like the server's (src/shared/noteIds.ts).
    assert.match(note.id, NEW_NOTE_ID);
    assert.equal(note.pending, true);
    assert.equal(note.version, 0);
    assert.equal(phone.engine.status().waiting, 1);
    await phone.engine.syncNow();
    assert.deepEqual(phone.engine.status(), {
      phase: 'idle',
      waiting: 0,
      lastSyncedAt: phone.engine.status().lastSyncedAt,
    });
    assert.equal(phone.engine.notes().get(note.id)?.version, 1);
    await laptop.engine.syncNow();
    assert.equal(laptop.engine.notes().get(note.id)?.title, 'Trip');
    await assertConverged(phone.engine, owner);
    await assertConverged(laptop.engine, owner);
    await phone.engine.close();
    await laptop.engine.close();
  });

  it('keeps the outbox across a restart of the app (same IndexedDB)', async () => {
    const userId = await userIdOf(owner);
    const first = await openDevice(owner, userId);
    const note = await first.engine.create({ title: 'Written before a reload' });
    await first.engine.close();
    const again = await openDevice(owner, userId, { indexedDB: first.indexedDB });
    assert.equal(again.engine.notes().get(note.id)?.title, 'Written before a reload');
    assert.equal(again.engine.status().waiting, 1);
    await again.engine.syncNow();
    await assertConverged(again.engine, owner);
    await again.engine.close();
  });

  it('merges the edits of one note into one pending change: last value of each field, latest timestamp', async () => {
    const userId = await userIdOf(owner);
    const recorder = recordingFetch(fetchAs(owner));
    let clock = Date.now();
    const device = await openDevice(owner, userId, { fetch: recorder.fetch, now: () => clock });
    const note = await device.engine.create({ title: 'List' });
    await device.engine.syncNow();
    for (const fields of [
      { title: 'Groceries' },
      { color: 'mint' as const },
      { title: 'Groceries for Sunday', pinned: true },
    ]) {
      clock += 1000;
      await device.engine.update(note.id, fields);
    }
    assert.equal(device.engine.status().waiting, 1);
    await device.engine.syncNow();
    const [, second] = recorder.pushes();
    assert.deepEqual(second!.body.changes, [
      {
        noteId: note.id,
        operation: 'update',
        timestamp: clock,
        baseVersion: 1,
        data: { title: 'Groceries for Sunday', color: 'mint', pinned: true },
      },
    ]);
    await assertConverged(device.engine, owner);
    await device.engine.close();
  });

  it('an update worked out from the note builds on every write before it, even one still running', async () => {
    const userId = await userIdOf(owner);
    const device = await openDevice(owner, userId);
    const note = await device.engine.create({ content: 'plant roses' });
    const seen: string[] = [];
    const tag = (name: string) => (stands: { content: string }) => {
      seen.push(stands.content);
      return { content: `${stands.content}\n#${name}` };
    };
    // Two ticks in a row, the second asked for before the first is written (the "Label note"
    // boxes): read when it was asked for, the second would write the text without the first tag.
    await Promise.all([
      device.engine.update(note.id, tag('ideas')),
      device.engine.update(note.id, tag('flowers')),
    ]);
    assert.deepEqual(seen, ['plant roses', 'plant roses\n#ideas']);
    assert.equal(device.engine.notes().get(note.id)?.content, 'plant roses\n#ideas\n#flowers');
    // null changes nothing; a note the device does not know is not asked about.
    await device.engine.syncNow();
    await device.engine.update([note.id, '00000000-0000-4000-8000-000000000000'], (stands) => {
      seen.push(stands.id);
      return null;
    });
    assert.deepEqual(seen.slice(2), [note.id]);
    assert.equal(device.engine.status().waiting, 0);
    await assertConverged(device.engine, owner);
    await device.engine.close();
  });

  it('typing while a push is in flight makes no conflict copy of the device’s own text (D-SYNC-7)', async () => {
    const userId = await userIdOf(owner);
    let typeDuringPush: (() => Promise<void>) | undefined;
    const recorder = recordingFetch(fetchAs(owner), async (request) => {
      if (request.method !== 'POST' || !typeDuringPush) return;
      const typing = typeDuringPush;
      typeDuringPush = undefined;
      await typing();
    });
    const device = await openDevice(owner, userId, { fetch: recorder.fetch });
    const notices = noticesOf(device.engine);
    const note = await device.engine.create({ title: 'Trip', content: 'Pack' });
    await device.engine.syncNow();
    await device.engine.update(note.id, { title: 'Trip to', content: 'Pack\nBook' });
    typeDuringPush = () =>
      device.engine.update(note.id, { title: 'Trip to Lisbon', content: 'Pack\nBook\nGo' });
    await device.engine.syncNow();
    const pushes = recorder.pushes();
    assert.equal(pushes.length, 3, 'the create, the edit, and the edit typed during its push');
    assert.equal(pushes[2]!.body.changes[0].baseVersion, 2, 'based on the acknowledged version');
    const onServer = await pullAll(owner);
    assert.equal(onServer.filter((n) => n.title.includes('(conflict')).length, 0);
    assert.equal(device.engine.notes().get(note.id)?.title, 'Trip to Lisbon');
    assert.equal(device.engine.notes().get(note.id)?.content, 'Pack\nBook\nGo');
    assert.deepEqual(notices, []);
    await assertConverged(device.engine, owner);
    await device.engine.close();
  });

  it('shows what the server acknowledged until the next pull brings it (no old colour or text after the ack)', async () => {
    const userId = await userIdOf(owner);
    const online = fetchAs(owner);
    let cutAfterPush = false;
    let cut = false;
    // The network goes between the push's answer and the pull that follows it.
    const device = await openDevice(owner, userId, {
      fetch: async (input, init) => {
        if (cut) throw new TypeError('Failed to fetch');
        const response = await online(input, init);
        if (init?.method === 'POST' && cutAfterPush) cut = true;
        return response;
      },
    });
    const note = await device.engine.create({ title: 'Trip', content: 'Pack' });
    await device.engine.syncNow();
    await device.engine.update(note.id, { color: 'mint', pinned: true, title: 'Trip to Lisbon' });
    cutAfterPush = true;
    await device.engine.syncNow();
    assert.equal(device.engine.status().phase, 'offline');
    assert.equal(device.engine.status().waiting, 0, 'the change was acknowledged');
    const shown = device.engine.notes().get(note.id)!;
    assert.equal(shown.color, 'mint');
    assert.equal(shown.pinned, true);
    assert.equal(shown.title, 'Trip to Lisbon');
    assert.equal(shown.content, 'Pack');
    // Another device changes the colour again: the pull's newer copy wins over the acknowledged one.
    const laptop = await openDevice(owner, userId);
    await laptop.engine.syncNow();
    await laptop.engine.update(note.id, { color: 'dusk' });
    await laptop.engine.syncNow();
    cut = false;
    cutAfterPush = false;
    await device.engine.syncNow();
    assert.equal(device.engine.notes().get(note.id)?.color, 'dusk');
    await assertConverged(device.engine, owner);
    await device.engine.close();
    await laptop.engine.close();
  });

  it('a note made on this device stays shown from its acknowledgement to the pull (an open editor stays open)', async () => {
    const userId = await userIdOf(owner);
    const online = fetchAs(owner);
    let cut = false;
    // The network goes between the push's answer and the pull that follows it.
    const options = {
      fetch: async (input: string | URL | Request, init?: RequestInit) => {
        if (cut) throw new TypeError('Failed to fetch');
        const response = await online(input, init);
        if (init?.method === 'POST') cut = true;
        return response;
      },
    };
    const device = await openDevice(owner, userId, options);
    const note = await device.engine.create({ title: 'Bakery', content: 'Milk #shopping' });
    await device.engine.update(note.id, { color: 'sage' });
    const missing: string[] = [];
    device.engine.subscribe(() => {
      if (!device.engine.notes().has(note.id)) missing.push(device.engine.status().phase);
    });
    await device.engine.syncNow();
    assert.equal(device.engine.status().phase, 'offline');
    assert.equal(device.engine.status().waiting, 0, 'the create was acknowledged');
    assert.deepEqual(missing, [], 'the note never left the screen');
    const shown = device.engine.notes().get(note.id)!;
    const { body: onServer } = await owner.get<ServerNote>(`/api/notes/${note.id}`);
    const fields = (each: ServerNote) => [
      each.title,
      each.content,
      each.color,
      each.tags,
      each.ownerId,
      each.version,
    ];
    assert.deepEqual(fields(shown), fields(onServer));
    assert.equal(shown.pending, false);
    // Kept on the device as well: a reload before the pull shows it too, and edits build on it.
    await device.engine.close();
    const reloaded = await openDevice(owner, userId, { ...options, indexedDB: device.indexedDB });
    assert.equal(reloaded.engine.notes().get(note.id)?.title, 'Bakery');
    await reloaded.engine.update(note.id, { content: 'Milk #shopping\nBread' });
    cut = false;
    await reloaded.engine.syncNow(); // pull, push (the network goes again), pull refused
    cut = false;
    await reloaded.engine.syncNow(); // the pull that brings the server's copy
    assert.equal(reloaded.engine.notes().get(note.id)?.content, 'Milk #shopping\nBread');
    await assertConverged(reloaded.engine, owner);
    const { body: notes } = await owner.get<ServerNote[]>('/api/notes');
    assert.equal(notes.filter((each) => each.title.startsWith('Bakery')).length, 1, 'no conflict copy');
    await reloaded.engine.close();
  });

  it(`pushes at most ${MAX_SYNC_CHANGES} changes per request`, async () => {
    const userId = await userIdOf(owner);
    const recorder = recordingFetch(fetchAs(owner));
    const device = await openDevice(owner, userId, { fetch: recorder.fetch });
    for (let i = 0; i <= MAX_SYNC_CHANGES; i++) await device.engine.create({ title: `Note ${i}` });
    await device.engine.syncNow();
    assert.deepEqual(
      recorder.pushes().map((push) => push.body.changes.length),
      [MAX_SYNC_CHANGES, 1],
    );
    await assertConverged(device.engine, owner);
    await device.engine.close();
  });

  it('a note typed offline has the tags of its hashtags at once, as the server will give it', async () => {
    const userId = await userIdOf(owner);
    const device = await openDevice(owner, userId);
    const note = await device.engine.create({
      title: 'Plan #Trip',
      content: 'book #hotel\n```\n#not-a-tag\n```',
    });
    assert.deepEqual(note.tags, ['hotel', 'trip']);
    await device.engine.update(note.id, { content: 'no more tags here' });
    assert.deepEqual(device.engine.notes().get(note.id)?.tags, ['trip']);
    await device.engine.syncNow();
    assert.deepEqual(device.engine.notes().get(note.id)?.tags, ['trip']);
    await assertConverged(device.engine, owner);
    await device.engine.close();
  });

  it('a change the server refuses as invalid stays on the device, the rest is pushed, and an edit sends it again', async () => {
    const userId = await userIdOf(owner);
    const recorder = recordingFetch(fetchAs(owner));
    const device = await openDevice(owner, userId, { fetch: recorder.fetch });
    const notices = noticesOf(device.engine);
    const tooLong = await device.engine.create({ title: 'x'.repeat(1001), content: 'kept' });
    const fine = await device.engine.create({ title: 'Fine' });
    await device.engine.syncNow();
    assert.equal(device.engine.status().phase, 'idle');
    assert.equal(device.engine.notes().get(fine.id)?.pending, false);
    assert.equal(device.engine.notes().get(tooLong.id)?.content, 'kept');
    assert.equal(device.engine.status().waiting, 1);
    assert.deepEqual(
      notices.map((notice) => [notice.kind, notice.noteId]),
      [['rejected', tooLong.id]],
    );
    assert.match(notices[0]!.message, /\/changes\/0\/data\/title/);
    const pushesBefore = recorder.pushes().length;
    await device.engine.syncNow();
    assert.equal(recorder.pushes().length, pushesBefore, 'not sent again as is');
    await device.engine.update(tooLong.id, { title: 'Shorter' });
    await device.engine.syncNow();
    await assertConverged(device.engine, owner);
    assert.equal(device.engine.notes().get(tooLong.id)?.content, 'kept');
    await device.engine.close();
  });

  it('deleting a note forever that never reached the server sends nothing', async () => {
    const userId = await userIdOf(owner);
    const recorder = recordingFetch(fetchAs(owner));
    const device = await openDevice(owner, userId, { fetch: recorder.fetch });
    const note = await device.engine.create({ title: 'Oops' });
    await device.engine.deleteForever(note.id);
    assert.equal(device.engine.notes().has(note.id), false);
    assert.equal(device.engine.status().waiting, 0);
    await device.engine.syncNow();
    assert.equal(recorder.pushes().length, 0);
    await device.engine.close();
  });
});

describe('web sync engine: several devices', () => {
  const server = useServer();
  const owner = useOwner(server);

  async function twoDevicesWithNote(fields: { title: string; content: string }) {
    const userId = await userIdOf(owner);
    const phone = await openDevice(owner, userId);
    const laptop = await openDevice(owner, userId);
    const note = await phone.engine.create(fields);
    await phone.engine.syncNow();
    await laptop.engine.syncNow();
    return { phone, laptop, id: note.id };
  }

  it('offline edits on two devices converge', async () => {
    const { phone, laptop, id } = await twoDevicesWithNote({ title: 'Trip', content: '- [ ] passport' });
    const other = await laptop.engine.create({ title: 'Made on the laptop' });
    await phone.engine.update(id, { title: 'Trip to Lisbon', pinned: true });
    await laptop.engine.update(id, { content: '- [x] passport\n- [ ] tickets', color: 'sage' });
    await laptop.engine.deleteForever(other.id);
    const gone = await phone.engine.create({ title: 'Archived on the phone' });
    await phone.engine.update(gone.id, { archived: true });
    await laptop.engine.syncNow();
    await phone.engine.syncNow();
    await laptop.engine.syncNow();
    const note = phone.engine.notes().get(id)!;
    assert.deepEqual(
      [note.title, note.content, note.color, note.pinned],
      ['Trip to Lisbon', '- [x] passport\n- [ ] tickets', 'sage', true],
    );
    await assertConverged(phone.engine, owner);
    await assertConverged(laptop.engine, owner);
    await phone.engine.close();
    await laptop.engine.close();
  });

  it('a conflict copy the server made is reported', async () => {
    const { phone, laptop, id } = await twoDevicesWithNote({ title: 'Plan', content: 'Monday' });
    const notices = noticesOf(phone.engine);
    await laptop.engine.update(id, { content: 'Tuesday' });
    await phone.engine.update(id, { content: 'Wednesday' });
    await laptop.engine.syncNow();
    await phone.engine.syncNow();
    assert.equal(notices.length, 1);
    assert.equal(notices[0]!.kind, 'conflictCopy');
    const copy = phone.engine.notes().get(notices[0]!.noteId);
    assert.equal(copy?.content, 'Tuesday', 'the copy holds the other device’s text and has been pulled');
    assert.equal(phone.engine.notes().get(id)?.content, 'Wednesday');
    await laptop.engine.syncNow();
    await assertConverged(phone.engine, owner);
    await assertConverged(laptop.engine, owner);
    await phone.engine.close();
    await laptop.engine.close();
  });

  it('two people ticking different items of one list both keep their tick, with no copy', async () => {
    const ada = await createUserClient(server, 'ada-list@example.com');
    const ownerDevice = await openDevice(owner, await userIdOf(owner));
    const adaDevice = await openDevice(ada.client, ada.userId);
    const list = await ownerDevice.engine.create({
      title: 'Groceries',
      content: '- [ ] milk\n- [ ] bread\n- [ ] eggs',
    });
    await ownerDevice.engine.syncNow();
    await share(owner, list.id, ada.userId);
    await adaDevice.engine.syncNow();
    assert.equal(adaDevice.engine.notes().get(list.id)?.content, '- [ ] milk\n- [ ] bread\n- [ ] eggs');
    await ownerDevice.engine.update(list.id, { content: '- [x] milk\n- [ ] bread\n- [ ] eggs' });
    await adaDevice.engine.update(list.id, { content: '- [ ] milk\n- [x] bread\n- [ ] eggs' });
    await ownerDevice.engine.syncNow();
    await adaDevice.engine.syncNow();
    await ownerDevice.engine.syncNow();
    for (const device of [ownerDevice, adaDevice])
      assert.equal(device.engine.notes().get(list.id)?.content, '- [x] milk\n- [x] bread\n- [ ] eggs');
    assert.equal((await pullAll(owner)).filter((n) => n.title.startsWith('Groceries (conflict')).length, 0);
    await assertConverged(ownerDevice.engine, owner);
    await assertConverged(adaDevice.engine, ada.client);
    await ownerDevice.engine.close();
    await adaDevice.engine.close();
  });
});

describe('web sync engine: the device merges before pushing (D-SYNC-9 on the device)', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const server = useServer({ clock });
  const owner = useOwner(server);

  it('merges a tick with a list edited 60 times since, whose base the server no longer keeps', async () => {
    const userId = await userIdOf(owner);
    const now = () => clock.now();
    const phone = await openDevice(owner, userId, { now });
    const laptop = await openDevice(owner, userId, { now });
    const list = await phone.engine.create({ title: 'Groceries', content: '- [ ] milk\n- [ ] bread' });
    await phone.engine.syncNow();
    await laptop.engine.syncNow();
    await laptop.engine.update(list.id, { content: '- [ ] milk\n- [x] bread' });
    // A month later (sessions last 30 days: sign in again), the phone ticks milk and renames the
    // list 60 times: the server keeps 50 revisions or 30 days, so version 1 is no longer kept.
    clock.advance(31 * 86_400_000);
    assert.equal((await owner.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
    await phone.engine.update(list.id, { content: '- [x] milk\n- [ ] bread' });
    await phone.engine.syncNow();
    for (let i = 1; i <= 60; i++) {
      clock.advance(1000);
      assert.equal((await owner.patch(`/api/notes/${list.id}`, { title: `Groceries ${i}` })).status, 200);
    }
    const revisions = await owner.get(`/api/notes/${list.id}/revisions`);
    assert.equal(
      revisions.body.some((revision: { version: number }) => revision.version === 1),
      false,
      'the base is pruned',
    );
    await laptop.engine.syncNow();
    assert.equal(laptop.engine.notes().get(list.id)?.content, '- [x] milk\n- [x] bread');
    assert.equal((await pullAll(owner)).filter((n) => n.title.includes('(conflict')).length, 0);
    await phone.engine.syncNow();
    await assertConverged(phone.engine, owner);
    await assertConverged(laptop.engine, owner);
    await phone.engine.close();
    await laptop.engine.close();
  });
});

describe('web sync engine: typed text on a note gone elsewhere becomes a new note', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('a deletion pulled over a pending edit', async () => {
    const userId = await userIdOf(owner);
    const phone = await openDevice(owner, userId);
    const laptop = await openDevice(owner, userId);
    const note = await phone.engine.create({ title: 'Ideas', content: 'one', color: 'sand' });
    await phone.engine.syncNow();
    await laptop.engine.syncNow();
    const notices = noticesOf(laptop.engine);
    await laptop.engine.update(note.id, { content: 'one\ntwo, typed offline' });
    await phone.engine.deleteForever(note.id);
    await phone.engine.syncNow();
    await laptop.engine.syncNow();
    assert.equal(laptop.engine.notes().has(note.id), false);
    assert.deepEqual(
      notices.map((notice) => notice.kind),
      ['recoveredAsNewNote'],
    );
    const recovered = laptop.engine.notes().get(notices[0]!.noteId)!;
    assert.deepEqual(
      [recovered.title, recovered.content, recovered.color],
      ['Ideas', 'one\ntwo, typed offline', 'sand'],
    );
    await phone.engine.syncNow();
    await assertConverged(laptop.engine, owner);
    await assertConverged(phone.engine, owner);
    await phone.engine.close();
    await laptop.engine.close();
  });

  it('a push answered `deleted` (the note went between the pull and the push)', async () => {
    const userId = await userIdOf(owner);
    let deleteFirst: string | undefined;
    const recorder = recordingFetch(fetchAs(owner), async (request) => {
      if (request.method !== 'POST' || !deleteFirst) return;
      const id = deleteFirst;
      deleteFirst = undefined;
      assert.equal((await owner.delete(`/api/notes/${id}`)).status, 200);
    });
    const device = await openDevice(owner, userId, { fetch: recorder.fetch });
    const notices = noticesOf(device.engine);
    const note = await device.engine.create({ title: 'Draft', content: 'first' });
    await device.engine.syncNow();
    await device.engine.update(note.id, { title: 'Draft, typed offline' });
    deleteFirst = note.id;
    await device.engine.syncNow();
    assert.deepEqual(
      notices.map((notice) => notice.kind),
      ['recoveredAsNewNote'],
    );
    assert.equal(device.engine.notes().has(note.id), false);
    assert.equal(device.engine.notes().get(notices[0]!.noteId)?.title, 'Draft, typed offline');
    await assertConverged(device.engine, owner);
    await device.engine.close();
  });

  it('a note no longer shared with the person who edited it', async () => {
    const ada = await createUserClient(server, 'ada-unshared@example.com');
    const ownerDevice = await openDevice(owner, await userIdOf(owner));
    const adaDevice = await openDevice(ada.client, ada.userId);
    const notices = noticesOf(adaDevice.engine);
    const note = await ownerDevice.engine.create({ title: 'Shared plan', content: 'step 1' });
    await ownerDevice.engine.syncNow();
    await share(owner, note.id, ada.userId);
    await adaDevice.engine.syncNow();
    await adaDevice.engine.update(note.id, { content: 'step 1\nstep 2 by Ada' });
    const removed = await owner.delete(`/api/notes/${note.id}/collaborators?userId=${ada.userId}`);
    assert.equal(removed.status, 200);
    await adaDevice.engine.syncNow();
    assert.equal(notices[0]?.kind, 'recoveredAsNewNote');
    const recovered = (await pullAll(ada.client)).find((n) => n.id === notices[0]!.noteId);
    assert.equal(recovered?.content, 'step 1\nstep 2 by Ada');
    assert.equal(recovered?.ownerId, ada.userId);
    assert.equal((await pullAll(owner)).find((n) => n.id === note.id)?.content, 'step 1');
    await assertConverged(adaDevice.engine, ada.client);
    await ownerDevice.engine.close();
    await adaDevice.engine.close();
  });
});

describe('web sync engine: the editor’s typing for a note gone meanwhile (saveText)', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('goes into the note the pending text was recovered into, not into a second copy', async () => {
    const device = await openDevice(owner, await userIdOf(owner));
    const notices = noticesOf(device.engine);
    const note = await device.engine.create({ title: 'Ideas', content: 'one' });
    await device.engine.syncNow();
    const shown = device.engine.notes().get(note.id)!;
    await device.engine.update(note.id, { content: 'one\ntwo' });
    assert.equal((await owner.delete(`/api/notes/${note.id}`)).status, 200);
    await device.engine.syncNow();
    assert.deepEqual(
      notices.map((notice) => [notice.kind, notice.from]),
      [['recoveredAsNewNote', note.id]],
    );
    const copyId = notices[0]!.noteId;
    assert.equal(await device.engine.saveText(note.id, { content: 'one\ntwo\nthree' }, shown), copyId);
    assert.equal(await device.engine.saveText(note.id, {}, shown), copyId);
    assert.equal(notices.length, 1);
    await device.engine.syncNow();
    const stored = await pullAll(owner);
    assert.equal(stored.find((each) => each.id === copyId)?.content, 'one\ntwo\nthree');
    assert.equal(stored.filter((each) => each.content.startsWith('one\n')).length, 1);
    await device.engine.close();
  });

  it('with no text pending when the note went: a new note of what the editor shows, with the typing on top', async () => {
    const device = await openDevice(owner, await userIdOf(owner));
    const notices = noticesOf(device.engine);
    const note = await device.engine.create({ title: 'Trip', content: 'pack', color: 'mint' });
    await device.engine.syncNow();
    const shown = device.engine.notes().get(note.id)!;
    assert.equal((await owner.delete(`/api/notes/${note.id}`)).status, 200);
    await device.engine.syncNow();
    assert.equal(device.engine.notes().has(note.id), false);
    assert.equal(notices.length, 0, 'nothing typed, nothing recovered');
    assert.equal(await device.engine.saveText(note.id, {}, shown), undefined, 'nothing to save');
    const holder = await device.engine.saveText(note.id, { content: 'pack\nsocks' }, shown);
    assert.ok(holder && holder !== note.id);
    assert.deepEqual(
      notices.map((notice) => [notice.kind, notice.noteId, notice.from]),
      [['recoveredAsNewNote', holder, note.id]],
    );
    await device.engine.syncNow();
    const copy = (await pullAll(owner)).find((each) => each.id === holder);
    assert.deepEqual(
      [copy.id, copy.title, copy.content, copy.color],
      [holder, 'Trip', 'pack\nsocks', 'mint'],
    );
    await assertConverged(device.engine, owner);
    await device.engine.close();
  });

  it('a note still there takes the typing as update() does', async () => {
    const device = await openDevice(owner, await userIdOf(owner));
    const note = await device.engine.create({ title: 'Here', content: 'a' });
    const shown = device.engine.notes().get(note.id)!;
    assert.equal(await device.engine.saveText(note.id, { content: 'a b' }, shown), note.id);
    assert.equal(device.engine.notes().get(note.id)?.content, 'a b');
    await device.engine.syncNow();
    await assertConverged(device.engine, owner);
    await device.engine.close();
  });

  it('another tab of the browser sends the late typing into the copy its leader made', async () => {
    const userId = await userIdOf(owner);
    const locks = fakeLocks();
    const channel = channelHub();
    const leader = await openDevice(owner, userId, { locks, channel });
    const other = await openDevice(owner, userId, { locks, channel, indexedDB: leader.indexedDB });
    const note = await leader.engine.create({ title: 'Tabs', content: 'x' });
    await leader.engine.syncNow();
    await eventually(() =>
      assert.ok(other.engine.notes().get(note.id)?.version, 'the other tab has the note'),
    );
    const shown = other.engine.notes().get(note.id)!;
    await other.engine.update(note.id, { content: 'x y' });
    assert.equal((await owner.delete(`/api/notes/${note.id}`)).status, 200);
    const recovered = new Promise<SyncNotice>((resolve) =>
      other.engine.subscribe((event) => event.notice && resolve(event.notice)),
    );
    await leader.engine.syncNow();
    const notice = await recovered;
    assert.equal(await other.engine.saveText(note.id, { content: 'x y z' }, shown), notice.noteId);
    await leader.engine.syncNow();
    const stored = await pullAll(owner);
    assert.deepEqual(
      stored.filter((each) => each.title === 'Tabs').map((each) => [each.id, each.content]),
      [[notice.noteId, 'x y z']],
    );
    await leader.engine.close();
    await other.engine.close();
  });
});

describe('web sync engine: typed text on a note moved to Trash elsewhere', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('is kept in it, and the device says so once', async () => {
    const device = await openDevice(owner, await userIdOf(owner));
    const notices = noticesOf(device.engine);
    const note = await device.engine.create({ title: 'Plan', content: 'a' });
    await device.engine.syncNow();
    await device.engine.update(note.id, { content: 'a\nb' });
    assert.equal((await owner.patch(`/api/notes/${note.id}`, { trashed: true })).status, 200);
    await device.engine.syncNow();
    assert.deepEqual(
      notices.map((notice) => [notice.kind, notice.noteId]),
      [['trashedElsewhere', note.id]],
    );
    const stored = (await pullAll(owner)).find((each) => each.id === note.id);
    assert.deepEqual([stored.content, stored.trashed], ['a\nb', true]);
    // Restored here with more text typed, and changed elsewhere again (still in Trash there when
    // this device pulls): no second notice.
    await device.engine.update(note.id, { trashed: false, content: 'a\nb\nc' });
    assert.equal((await owner.patch(`/api/notes/${note.id}`, { color: 'sage' })).status, 200);
    await device.engine.syncNow();
    assert.equal(notices.length, 1);
    await assertConverged(device.engine, owner);
    await device.engine.close();
  });

  it('is not announced when nothing typed was waiting', async () => {
    const device = await openDevice(owner, await userIdOf(owner));
    const notices = noticesOf(device.engine);
    const note = await device.engine.create({ title: 'Plan', content: 'a' });
    await device.engine.syncNow();
    await device.engine.update(note.id, { color: 'sage' });
    assert.equal((await owner.patch(`/api/notes/${note.id}`, { trashed: true })).status, 200);
    await device.engine.syncNow();
    assert.deepEqual(notices, []);
    await device.engine.close();
  });
});

describe('web sync engine: 401 and 410', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const server = useServer({ clock });
  const owner = useOwner(server);

  it('401: keeps everything, reports signed out with the changes waiting, and pushes after sign-in', async () => {
    const userId = await userIdOf(owner);
    const device = await openDevice(owner, userId, { now: () => clock.now() });
    const note = await device.engine.create({ title: 'Before sign-out' });
    await device.engine.syncNow();
    await device.engine.update(note.id, { content: 'written while signed out' });
    await device.engine.create({ title: 'Also new' });
    assert.equal((await owner.post('/api/auth/logout')).status, 200);
    await device.engine.syncNow();
    assert.deepEqual(
      { ...device.engine.status(), lastSyncedAt: null },
      { phase: 'signedOut', waiting: 2, lastSyncedAt: null },
    );
    assert.equal(device.engine.notes().get(note.id)?.content, 'written while signed out');
    assert.equal(device.engine.notes().get(note.id)?.pending, true);
    assert.equal((await owner.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
    await device.engine.syncNow();
    assert.equal(device.engine.status().phase, 'idle');
    await assertConverged(device.engine, owner);
    assert.equal((await pullAll(owner)).find((n) => n.id === note.id)?.content, 'written while signed out');
    await device.engine.close();
  });

  it('410: pushes, reloads everything, drops what the server no longer has, and says so', async () => {
    const userId = await userIdOf(owner);
    const now = () => clock.now();
    const away = await openDevice(owner, userId, { now });
    const other = await openDevice(owner, userId, { now });
    const kept = await away.engine.create({ title: 'Kept' });
    const deleted = await away.engine.create({ title: 'Deleted elsewhere' });
    await away.engine.syncNow();
    await other.engine.syncNow();
    const notices = noticesOf(away.engine);
    await away.engine.update(kept.id, { content: 'typed before going away' });
    await other.engine.deleteForever(deleted.id);
    await other.engine.syncNow();
    clock.advance(91 * 86_400_000);
    assert.equal((await owner.post('/api/auth/login', { password: OWNER_PASSWORD })).status, 200);
    // The tombstone is forgotten after 90 days: this device can only learn it by a full reload.
    assert.equal((await owner.get(`/api/sync/deleted?since=${clock.now() - 92 * 86_400_000}`)).status, 410);
    await away.engine.syncNow();
    assert.equal(away.engine.notes().has(deleted.id), false);
    assert.equal(away.engine.notes().get(kept.id)?.content, 'typed before going away');
    assert.deepEqual(
      notices.map((notice) => notice.kind),
      ['resynced'],
    );
    await assertConverged(away.engine, owner);
    await away.engine.close();
    await other.engine.close();
  });
});

describe('web sync engine: several tabs of one browser', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('one tab syncs (Web Locks); every tab sees the others’ changes (BroadcastChannel)', async () => {
    const userId = await userIdOf(owner);
    const locks = fakeLocks();
    const channel = channelHub();
    const first = recordingFetch(fetchAs(owner));
    const second = recordingFetch(fetchAs(owner));
    const tab1 = await openDevice(owner, userId, { locks, channel, fetch: first.fetch });
    const tab2 = await openDevice(owner, userId, {
      locks,
      channel,
      fetch: second.fetch,
      indexedDB: tab1.indexedDB,
    });
    // Tab 2 edits: tab 1 sees it at once.
    const seen = nextEvent(tab1.engine, (event) => Array.isArray(event.notes));
    const note = await tab2.engine.create({ title: 'Typed in tab 2' });
    await seen;
    assert.equal(tab1.engine.notes().get(note.id)?.title, 'Typed in tab 2');
    assert.equal(tab1.engine.status().waiting, 1);
    // Tab 2 asks for a sync: the leader (tab 1) does it; tab 2 sees the result.
    const pulled = nextEvent(tab2.engine, () => tab2.engine.notes().get(note.id)?.pending === false);
    await tab2.engine.syncNow();
    await pulled;
    assert.equal(second.requests.length, 0, 'the second tab never talks to the server');
    assert.equal(first.pushes().length, 1);
    assert.equal(tab2.engine.notes().get(note.id)?.version, 1);
    // A note from elsewhere, pulled by the leader, reaches tab 2 too.
    const elsewhere = await owner.post('/api/notes', { title: 'From another device' });
    const arrived = nextEvent(tab2.engine, () => tab2.engine.notes().has(elsewhere.body.id));
    await tab1.engine.syncNow();
    await arrived;
    // The leader closes: tab 2 takes over.
    await tab1.engine.close();
    await tab2.engine.update(note.id, { pinned: true });
    await tab2.engine.syncNow();
    assert.equal(second.pushes().length, 1);
    await assertConverged(tab2.engine, owner);
    await tab2.engine.close();
  });
});

describe('web sync engine: when it syncs', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('with the live stream refused: pulls at start, every 30 s while visible, on focus and online; pushes 1 s after the last edit', async () => {
    const userId = await userIdOf(owner);
    const timers = new ManualTimers();
    const recorder = recordingFetch(refusingEvents(fetchAs(owner)));
    const document = { visibilityState: 'visible' as DocumentVisibilityState, ...eventTarget() };
    const window = eventTarget();
    const device = await openDevice(owner, userId, { timers, fetch: recorder.fetch, document, window });
    const pulls = () => recorder.requests.filter((r) => r.path.startsWith('/api/sync?')).length;
    const streams = () => recorder.requests.filter((r) => r.path === '/api/events').length;
    await syncFinished(device.engine);
    assert.equal(pulls(), 1, 'at start');
    await eventually(() => assert.ok(retryTimer(timers), 'the stream is tried again later'));
    assert.equal(streams(), 1);
    timers.fire(30_000);
    await syncFinished(device.engine);
    assert.equal(pulls(), 2, 'every 30 s');
    document.visibilityState = 'hidden';
    assert.equal(timers.fire(30_000), 1);
    assert.equal(pulls(), 2, 'not while hidden');
    document.visibilityState = 'visible';
    document.dispatch('visibilitychange');
    await syncFinished(device.engine);
    window.dispatch('focus');
    await syncFinished(device.engine);
    window.dispatch('online');
    await syncFinished(device.engine);
    assert.equal(pulls(), 5, 'visible again, focus, online');
    assert.equal(streams(), 2, 'back online: the stream is tried again at once');
    window.dispatch('offline');
    assert.equal(device.engine.status().phase, 'offline');
    const note = await device.engine.create({ title: 'a' });
    await device.engine.update(note.id, { title: 'ab' });
    assert.equal(recorder.pushes().length, 0);
    assert.equal(timers.fire(1_000), 1, 'one push timer, restarted by each edit');
    await syncFinished(device.engine);
    assert.equal(recorder.pushes().length, 1);
    await assertConverged(device.engine, owner);
    await device.engine.close();
    assert.equal(timers.pending.size, 0, 'close stops the timers');
  });

  // No timer of the engine runs here (ManualTimers, none fired): a note that arrives came by a hint.
  it('with the live stream up: pulls on a hint, not on a timer; after a drop, polls and reconnects with Last-Event-ID', async () => {
    const userId = await userIdOf(owner);
    const timers = new ManualTimers();
    const streams = droppableEvents(fetchAs(owner));
    const device = await openDevice(owner, userId, { timers, fetch: streams.fetch });
    await eventually(() => assert.equal(streams.open(), 1));
    await eventually(() => assert.equal(device.engine.status().phase, 'idle'));
    assert.equal(pollTimers(timers), 0, 'no polling while the stream is up');

    const elsewhere = await owner.post('/api/notes', { title: 'from another device', content: '' });
    await eventually(() => assert.ok(device.engine.notes().has(elsewhere.body.id), 'pulled on the hint'));
    assert.equal(pollTimers(timers), 0);

    // The stream drops: the slow poll runs while it is down, and the stream comes back with the
    // last event's id; what changed meanwhile arrives.
    streams.drop();
    await eventually(() => assert.ok(retryTimer(timers), 'a retry is due'));
    assert.equal(pollTimers(timers), 1, 'polling while the stream is down');
    const meanwhile = await owner.post('/api/notes', { title: 'while it was down', content: '' });
    fireRetry(timers);
    await eventually(() => assert.equal(streams.open(), 1));
    assert.match(streams.lastEventIds.at(-1) ?? '', /^[\w-]+\.\d+$/, 'reconnects with Last-Event-ID');
    await eventually(() =>
      assert.ok(device.engine.notes().has(meanwhile.body.id), 'pulled after reconnecting'),
    );
    assert.equal(pollTimers(timers), 0, 'no polling once it is back');
    await device.engine.close();
    assert.equal(timers.pending.size, 0, 'close stops the timers');
    await eventually(() => assert.equal(streams.open(), 0, 'close ends the stream'));
  });
});

/** A fetch whose GET /api/events is refused as a server over its stream limit refuses it. */
function refusingEvents(inner: typeof fetch): typeof fetch {
  return (input, init) =>
    new URL(String(input)).pathname === '/api/events'
      ? Promise.resolve(new Response('{"error":"rate_limited"}', { status: 429 }))
      : inner(input, init);
}

/** A fetch whose live streams the test can cut (a network drop), recording their Last-Event-ID. */
function droppableEvents(inner: typeof fetch) {
  const cuts = new Set<AbortController>();
  const lastEventIds: (string | null)[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    if (new URL(String(input)).pathname !== '/api/events') return inner(input, init);
    lastEventIds.push(new Headers(init?.headers).get('last-event-id'));
    const cut = new AbortController();
    const signal = init?.signal ? AbortSignal.any([init.signal, cut.signal]) : cut.signal;
    cuts.add(cut);
    const response = await inner(input, { ...init, signal });
    const reading = response.body!.pipeThrough(new TransformStream());
    signal.addEventListener('abort', () => cuts.delete(cut));
    return new Response(reading, { status: response.status, headers: response.headers });
  };
  return {
    fetch: wrapped,
    lastEventIds,
    open: () => cuts.size,
    drop() {
      for (const cut of cuts) cut.abort();
    },
  };
}

/** The engine's fallback poll timers (every 30 s). */
const pollTimers = (timers: ManualTimers) =>
  [...timers.pending.values()].filter((timer) => timer.repeat && timer.ms === 30_000).length;

/** The live stream's reconnection timer: the one-shot timer that is not the push's. */
const retryTimer = (timers: ManualTimers) =>
  [...timers.pending].find(([, timer]) => !timer.repeat && timer.ms !== 1_000);

function fireRetry(timers: ManualTimers) {
  const [handle, timer] = retryTimer(timers)!;
  timers.pending.delete(handle);
  timer.callback();
}

/** An event target the test dispatches on by hand (document, window). */
function eventTarget() {
  const listeners = new Map<string, (() => void)[]>();
  return {
    addEventListener(type: string, listener: () => void) {
      listeners.set(type, [...(listeners.get(type) ?? []), listener]);
    },
    dispatch(type: string) {
      for (const listener of listeners.get(type) ?? []) listener();
    },
  } as Pick<Window, 'addEventListener'> & { dispatch(type: string): void };
}
