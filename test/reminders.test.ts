import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { CLAIM_LIMIT } from '../src/features/reminders/scheduler.js';
import { eventually } from './helpers/browser.js';
import { createUserClient, setupOwner, TestClient } from './helpers/client.js';
import { databaseUrlFor, dropDatabaseOf, onPostgres } from './helpers/postgres.js';
import { type PushService, startPushService } from './helpers/pushService.js';
import {
  ManualClock,
  type ServerProcess,
  skewedClockEnv,
  spawnServer,
  startServer,
  type TestServer,
  tempDataDir,
  useOwner,
  useServer,
  withServerProcesses,
} from './helpers/server.js';
import { pullAll, push, share } from './helpers/sync.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const PRIVATE_PUSH = { PUSH_ALLOW_PRIVATE_ENDPOINTS: 'true' };

async function subscribe(client: TestClient, service: PushService) {
  const subscription = service.subscribe();
  const response = await client.post('/api/push/subscriptions', subscription);
  assert.equal(response.status, 201, response.text);
  return subscription;
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('reminders are per user', () => {
  const server = useServer();
  const owner = useOwner(server);
  let friend: TestClient;
  let friendId: number;
  before(async () => {
    ({ client: friend, userId: friendId } = await createUserClient(server, 'friend@example.com'));
  });

  it('shows each reader their own reminder on a shared note, in every answer', async () => {
    const at = '2030-05-01T07:00:00.000Z';
    const created = await owner.post('/api/notes', {
      title: 'Call mum',
      reminder: { at, repeat: 'weekly', timeZone: 'Europe/Berlin' },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.reminder, { at, repeat: 'weekly', timeZone: 'Europe/Berlin', nextAt: at });
    const id = created.body.id;
    await share(owner, id, friendId);

    // The collaborator sees no reminder: the owner's is the owner's.
    for (const path of [`/api/notes/${id}`]) assert.equal((await friend.get(path)).body.reminder, null);
    assert.equal(
      (await friend.get('/api/notes')).body.find((n: { id: string }) => n.id === id).reminder,
      null,
    );
    assert.equal((await pullAll(friend)).find((n) => n.id === id).reminder, null);
    assert.deepEqual((await friend.get('/api/reminders')).body, []);

    // The collaborator's own reminder, invisible to the owner.
    const theirs = '2030-06-01T10:00:00.000Z';
    const patched = await friend.patch(`/api/notes/${id}`, { reminder: { at: theirs } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.reminder, { at: theirs, repeat: 'none', timeZone: 'UTC', nextAt: theirs });
    assert.equal(patched.body.version, created.body.version, 'a reminder is not a change of the note');
    assert.equal((await owner.get(`/api/notes/${id}`)).body.reminder.at, at);
    assert.equal((await friend.get(`/api/notes/${id}`)).body.reminder.at, theirs);
    const ownerList = await owner.get('/api/notes');
    assert.equal(ownerList.body.find((n: { id: string }) => n.id === id).reminder.at, at);
    assert.equal((await pullAll(owner)).find((n) => n.id === id).reminder.at, at);
    assert.equal((await pullAll(friend)).find((n) => n.id === id).reminder.at, theirs);
    assert.deepEqual(
      (await owner.get('/api/reminders')).body.map((r: { noteId: string; at: string }) => [r.noteId, r.at]),
      [[id, at]],
    );
    const search = await friend.get('/api/search?q=mum');
    assert.equal(search.body[0].reminder.at, theirs);
  });

  it('changes the list ETag when only a reminder changed, and the list answer with it', async () => {
    const note = (await owner.post('/api/notes', { title: 'etag' })).body;
    const first = await owner.get('/api/notes');
    await owner.patch(`/api/notes/${note.id}`, { reminder: { at: '2031-01-01T00:00:00Z' } });
    const second = await owner.get('/api/notes', {
      headers: { 'if-none-match': first.headers.get('etag')! },
    });
    assert.equal(second.status, 200);
    assert.notEqual(second.headers.get('etag'), first.headers.get('etag'));
    assert.equal(
      second.body.find((n: { id: string }) => n.id === note.id).reminder.at,
      '2031-01-01T00:00:00.000Z',
    );
    // Removing it: null again, and another ETag.
    await owner.patch(`/api/notes/${note.id}`, { reminder: null });
    const third = await owner.get('/api/notes', {
      headers: { 'if-none-match': second.headers.get('etag')! },
    });
    assert.equal(third.status, 200);
    assert.equal(third.body.find((n: { id: string }) => n.id === note.id).reminder, null);
    const unchanged = await owner.get('/api/notes', {
      headers: { 'if-none-match': third.headers.get('etag')! },
    });
    assert.equal(unchanged.status, 304);
  });

  it('refuses a malformed date, an unknown repeat or time zone with 400, over REST and sync', async () => {
    const note = (await owner.post('/api/notes', { title: 'bad' })).body;
    for (const reminder of [
      { at: 'tomorrow' },
      { at: '2030-13-01T00:00:00Z' },
      { at: '2030-01-01T00:00:00Z', repeat: 'hourly' },
      { at: '2030-01-01T00:00:00Z', timeZone: 'Mars/Olympus' },
      { repeat: 'daily' },
      'soon',
    ]) {
      const patched = await owner.patch(`/api/notes/${note.id}`, { reminder });
      assert.equal(patched.status, 400, JSON.stringify(reminder));
      assert.equal(patched.body.code, 'validation_failed');
      const created = await owner.post('/api/notes', { reminder });
      assert.equal(created.status, 400);
      const pushed = await owner.post('/api/sync', {
        changes: [{ noteId: note.id, operation: 'update', timestamp: 1, data: { reminder } }],
      });
      assert.equal(pushed.status, 400);
      assert.match(pushed.body.message, /\/changes\/0\/data\/reminder/);
    }
    assert.equal((await owner.get(`/api/notes/${note.id}`)).body.reminder, null);
  });

  it('syncs a reminder set offline, last writer wins, and pulls it on the other device', async () => {
    const noteId = randomUUID();
    const at = '2030-02-03T08:00:00.000Z';
    const since = Number((await owner.get('/api/sync?since=0')).headers.get('x-sync-time'));
    const [created] = await push(owner, [
      { noteId, operation: 'create', timestamp: 1_000, data: { title: 'offline', reminder: { at } } },
    ]);
    assert.equal(created!.status, 'applied');
    // An older change does not overwrite it.
    await push(owner, [{ noteId, operation: 'update', timestamp: 500, data: { reminder: null } }]);
    const pulled = await owner.get(`/api/sync?since=${since}`);
    assert.equal(pulled.body.find((n: { id: string }) => n.id === noteId).reminder.at, at);

    // A reminder change alone brings the note back in the next pull.
    const before = Number(pulled.headers.get('x-sync-time'));
    await push(owner, [{ noteId, operation: 'update', timestamp: 2_000, data: { reminder: null } }]);
    const again = await owner.get(`/api/sync?since=${before}`);
    assert.deepEqual(
      again.body.map((n: { id: string; reminder: unknown }) => [n.id, n.reminder]),
      [[noteId, null]],
    );
  });
});

describe('reminders ring through Web Push', () => {
  let pushService: PushService;
  let server: TestServer;
  let owner: TestClient;
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 8));
  before(async () => {
    pushService = await startPushService();
    server = await startServer({ clock, env: PRIVATE_PUSH });
    owner = await setupOwner(server);
  });
  after(async () => {
    await server.close();
    await pushService.close();
  });

  it('pushes an encrypted, VAPID-signed payload to every subscription within 5 s of due', async () => {
    const key = (await owner.get('/api/push/public-key')).body.publicKey;
    assert.match(key, /^[A-Za-z0-9_-]{87}$/);
    const phone = await subscribe(owner, pushService);
    const laptop = await subscribe(owner, pushService);
    // Idempotent per endpoint: subscribing again does not make a second push.
    assert.equal((await owner.post('/api/push/subscriptions', laptop)).status, 201);
    const note = (
      await owner.post('/api/notes', {
        title: 'Water the plants',
        reminder: { at: iso(clock.now() + 10 * MINUTE) },
      })
    ).body;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(pushService.received.length, 0, 'not due yet');

    clock.advance(10 * MINUTE);
    const due = Date.now();
    const received = await pushService.waitFor(2, 5_000);
    assert.ok(received.every((p) => p.at - due <= 5_000));
    assert.deepEqual(
      new Set(received.map((p) => p.device)),
      new Set([phone, laptop].map((s) => new URL(s.endpoint).pathname)),
    );
    for (const pushed of received) {
      assert.equal(pushed.vapidKey, key);
      assert.equal(pushed.payload.type, 'reminder');
      assert.equal(pushed.payload.noteId, note.id);
      assert.equal(pushed.payload.title, 'Water the plants');
    }
    assert.deepEqual(pushService.refused, []);
    // Rung: a one-off has no next time, and rings no more.
    const rung = (await owner.get(`/api/notes/${note.id}`)).body.reminder;
    assert.equal(rung.nextAt, null);
    clock.advance(DAY);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(pushService.received.length, 2);
    assert.equal((await owner.get('/api/reminders')).body.at(-1).nextAt, null);
  });

  it('forgets a subscription whose push service answers 404 or 410', async () => {
    pushService.received.length = 0;
    const gone = await subscribe(owner, pushService);
    const expired = await subscribe(owner, pushService);
    pushService.answer(gone.endpoint, 410);
    pushService.answer(expired.endpoint, 404);
    await owner.post('/api/notes', { title: 'ping', reminder: { at: iso(clock.now() + MINUTE) } });
    clock.advance(MINUTE);
    await pushService.waitFor(2, 5_000); // the two subscriptions of the first test
    const endpoints = async () =>
      (await server.app.db.selectFrom('push_subscriptions').select('endpoint').execute()).map(
        (row) => row.endpoint,
      );
    for (let wait = 0; (await endpoints()).length > 2 && wait < 50; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const left = await endpoints();
    assert.ok(!left.includes(gone.endpoint) && !left.includes(expired.endpoint));
    assert.equal(left.length, 2);
  });

  it('unsubscribes with DELETE (204), and only the caller’s own subscription', async () => {
    const mine = await subscribe(owner, pushService);
    const { client: other } = await createUserClient(server, 'other@example.com');
    const refused = await other.delete(
      `/api/push/subscriptions?endpoint=${encodeURIComponent(mine.endpoint)}`,
    );
    assert.equal(refused.status, 204);
    const count = async () =>
      (
        await server.app.db
          .selectFrom('push_subscriptions')
          .select('endpoint')
          .where('endpoint', '=', mine.endpoint)
          .execute()
      ).length;
    assert.equal(await count(), 1, "another user cannot remove someone's subscription");
    const removed = await owner.delete(
      `/api/push/subscriptions?endpoint=${encodeURIComponent(mine.endpoint)}`,
    );
    assert.equal(removed.status, 204);
    assert.equal(await count(), 0);
  });

  it('does not ring a reminder whose note was trashed, deleted, or is no longer shared with its user', async () => {
    pushService.received.length = 0;
    const { client: friend, userId: friendId } = await createUserClient(server, 'friend2@example.com');
    await subscribe(friend, pushService);
    const at = iso(clock.now() + MINUTE);
    const trashed = (await owner.post('/api/notes', { title: 'trashed', reminder: { at } })).body;
    const deleted = (await owner.post('/api/notes', { title: 'deleted', reminder: { at } })).body;
    const unshared = (await owner.post('/api/notes', { title: 'unshared' })).body;
    const kept = (await owner.post('/api/notes', { title: 'kept' })).body;
    for (const note of [unshared, kept]) {
      await share(owner, note.id, friendId);
      await friend.patch(`/api/notes/${note.id}`, { reminder: { at } });
    }
    await owner.patch(`/api/notes/${trashed.id}`, { trashed: true });
    await owner.delete(`/api/notes/${deleted.id}`);
    await owner.delete(`/api/notes/${unshared.id}/collaborators?userId=${friendId}`);
    assert.deepEqual(
      (await friend.get('/api/reminders')).body.map((r: { title: string }) => r.title),
      ['kept'],
    );
    clock.advance(MINUTE);
    const [ring] = await pushService.waitFor(1, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.deepEqual(
      pushService.received.map((p) => p.payload.title),
      ['kept'],
    );
    assert.equal(ring!.payload.noteId, kept.id);
  });
});

describe('a notification’s "Done", and a note restored from the trash', () => {
  let pushService: PushService;
  let server: TestServer;
  let owner: TestClient;
  const clock = new ManualClock(Date.UTC(2026, 3, 1, 8));
  before(async () => {
    pushService = await startPushService();
    server = await startServer({ clock, env: PRIVATE_PUSH });
    owner = await setupOwner(server);
    await subscribe(owner, pushService);
  });
  after(async () => {
    await server.close();
    await pushService.close();
  });

  /** Makes the notes' reminders fall due and waits for `count` more pushes. */
  async function ring(minutes: number, count: number) {
    const before = pushService.received.length;
    clock.advance(minutes * MINUTE);
    const received = await pushService.waitFor(before + count, 5_000);
    return received.slice(before);
  }
  const reminderOf = async (id: string) => (await owner.get(`/api/notes/${id}`)).body.reminder;
  const done = (id: string, dueAt: unknown) => owner.post(`/api/reminders/${id}/done`, { dueAt });

  it('removes a one-off reminder that rang; leaves a repeat, and a reminder set again since', async () => {
    const at = iso(clock.now() + MINUTE);
    const once = (await owner.post('/api/notes', { title: 'once', reminder: { at } })).body;
    const daily = (await owner.post('/api/notes', { title: 'daily', reminder: { at, repeat: 'daily' } }))
      .body;
    const again = (await owner.post('/api/notes', { title: 'again', reminder: { at } })).body;
    const rings = await ring(1, 3);
    const dueAt = (id: string) => rings.find((p) => p.payload.noteId === id)!.payload.dueAt;
    assert.equal(dueAt(once.id), at);

    // "again" is snoozed (set anew) on another device before this notification's "Done" arrives.
    const later = iso(clock.now() + 60 * MINUTE);
    await owner.patch(`/api/notes/${again.id}`, { reminder: { at: later } });
    for (const note of [once, daily, again]) {
      assert.equal((await done(note.id, dueAt(note.id))).status, 204);
    }
    assert.equal(await reminderOf(once.id), null);
    assert.equal((await reminderOf(daily.id)).nextAt, iso(Date.parse(at) + DAY));
    assert.equal((await reminderOf(again.id)).at, later);
    assert.deepEqual(
      (await owner.get('/api/reminders')).body.map((r: { title: string }) => r.title),
      ['again', 'daily'],
    );
    // Sent twice (a queued "Done" replayed): nothing more changes.
    assert.equal((await done(once.id, dueAt(once.id))).status, 204);
    assert.equal((await done(daily.id, dueAt(daily.id))).status, 204);
    assert.equal((await reminderOf(daily.id)).nextAt, iso(Date.parse(at) + DAY));
  });

  it('refuses a "Done" on a note the caller cannot see, or without a date-time', async () => {
    const note = (await owner.post('/api/notes', { title: 'mine' })).body;
    const { client: stranger } = await createUserClient(server, 'stranger@example.com');
    assert.equal(
      (await stranger.post(`/api/reminders/${note.id}/done`, { dueAt: iso(clock.now()) })).status,
      404,
    );
    assert.equal((await done(note.id, 'yesterday')).status, 400);
    assert.equal((await done(note.id, undefined)).status, 400);
    assert.equal((await done('not-a-note', iso(clock.now()))).status, 400);
  });

  it('keeps a repeat through the trash: silent while trashed, ringing again once restored', async () => {
    const at = iso(clock.now() + MINUTE);
    const daily = (await owner.post('/api/notes', { title: 'stretch', reminder: { at, repeat: 'daily' } }))
      .body;
    const once = (await owner.post('/api/notes', { title: 'parcel', reminder: { at } })).body;
    const upcoming = (
      await owner.post('/api/notes', { title: 'dentist', reminder: { at: iso(clock.now() + 3 * DAY) } })
    ).body;
    for (const note of [daily, once, upcoming]) await owner.patch(`/api/notes/${note.id}`, { trashed: true });
    clock.advance(DAY + MINUTE); // two occurrences of the repeat, and the one-off, pass in the trash
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const mine = new Set([daily.id, once.id, upcoming.id]);
    const rungHere = () => pushService.received.filter((p) => mine.has(p.payload.noteId as string));
    assert.deepEqual(rungHere(), [], 'nothing rings from the trash');

    for (const note of [daily, once, upcoming])
      await owner.patch(`/api/notes/${note.id}`, { trashed: false });
    // The repeat is back at its next occurrence; the one-off's time passed: it stays rung, silent.
    assert.equal((await reminderOf(daily.id)).nextAt, iso(Date.parse(at) + 2 * DAY));
    assert.equal((await reminderOf(once.id)).nextAt, null);
    assert.equal((await reminderOf(upcoming.id)).nextAt, iso(Date.parse(at) - MINUTE + 3 * DAY));
    clock.advance(DAY);
    await eventually(() => assert.equal(rungHere().length, 1));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.deepEqual(
      rungHere().map((p) => p.payload.noteId),
      [daily.id],
    );
  });
});

describe('push endpoints (SSRF)', () => {
  const server = useServer();
  const owner = useOwner(server);
  const keys = { p256dh: 'BAAA', auth: 'AAAA' };

  it('refuses endpoints that are not https: on a public address', async () => {
    for (const endpoint of [
      'http://push.example.com/x',
      'https://127.0.0.1/x',
      'https://localhost/x',
      'https://10.1.2.3/x',
      'https://192.168.1.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/x',
      'https://[fd00::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://100.64.0.1/x',
      'https://0.0.0.0/x',
      'https://user:pw@push.example.com/x',
      'file:///etc/passwd',
      'not a url',
    ]) {
      const response = await owner.post('/api/push/subscriptions', { endpoint, keys });
      assert.equal(response.status, 400, endpoint);
      assert.equal(response.body.code, 'validation_failed');
    }
    const stored = await server.app.db.selectFrom('push_subscriptions').selectAll().execute();
    assert.deepEqual(stored, []);
  });

  it('checks the address again when sending: a stored endpoint that resolves to loopback gets no request', async () => {
    const net = await import('node:net');
    let connections = 0;
    const listener = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as { port: number }).port;
    try {
      const { createPushSender } = await import('../src/features/reminders/push.js');
      const warnings: string[] = [];
      const sender = createPushSender({
        db: server.app.db,
        log: { warn: (_details, message) => warnings.push(message) },
        allowPrivateEndpoints: false,
        subject: 'mailto:admin@example.com',
      });
      const payload = { type: 'reminder' as const, noteId: randomUUID(), title: 't', dueAt: iso(0) };
      const target = {
        p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
        auth: 'tBHItJI5svbpez7KI4CCXg',
      };
      for (const endpoint of [`https://localhost:${port}/push`, `https://127.0.0.1:${port}/push`]) {
        assert.equal(await sender.send({ endpoint, ...target }, payload), 'gone', endpoint);
      }
      assert.equal(connections, 0);
      assert.equal(warnings.length, 2);
    } finally {
      listener.close();
    }
  });
});

describe('the calendar feed', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('serves the reminders as iCalendar at a secret URL, rotated by POST and ended by DELETE', async () => {
    const ICAL = (await import('ical.js')).default;
    const note = (
      await owner.post('/api/notes', {
        title: 'Pay rent',
        reminder: { at: '2030-01-31T08:00:00Z', repeat: 'monthly', timeZone: 'Europe/Berlin' },
      })
    ).body;
    await owner.post('/api/notes', { title: 'Dentist', reminder: { at: '2030-03-01T09:30:00Z' } });
    const first = await owner.post('/api/reminders/feed');
    assert.equal(first.status, 200);
    const url = new URL(first.body.url);
    assert.match(url.pathname, /^\/api\/reminders\/feed\/[A-Za-z0-9_-]{43}$/);

    const anonymous = await fetch(new URL(url.pathname, server.url));
    assert.equal(anonymous.status, 200);
    assert.match(anonymous.headers.get('content-type')!, /^text\/calendar/);
    const calendar = new ICAL.Component(ICAL.parse(await anonymous.text()));
    const events = calendar.getAllSubcomponents('vevent').map((vevent) => new ICAL.Event(vevent));
    const rent = events.find((event) => event.summary === 'Pay rent')!;
    assert.ok(rent, 'an event per reminder, named after the note');
    const start = rent.component.getFirstProperty('dtstart')!;
    assert.equal(start.getParameter('tzid'), 'Europe/Berlin');
    assert.equal(rent.startDate.toString(), '2030-01-31T09:00:00');
    assert.ok(
      calendar
        .getAllSubcomponents('vtimezone')
        .some((tz) => tz.getFirstPropertyValue('tzid') === 'Europe/Berlin'),
    );
    assert.match(String(rent.component.getFirstPropertyValue('rrule')), /FREQ=MONTHLY/);
    // Monthly on the 31st: the last day of February, then the 31st again.
    const iterator = rent.iterator();
    const rings = [iterator.next(), iterator.next(), iterator.next()].map((time) => time!.toString());
    assert.deepEqual(rings, ['2030-01-31T09:00:00', '2030-02-28T09:00:00', '2030-03-31T09:00:00']);
    assert.equal(rent.component.getFirstSubcomponent('valarm')!.getFirstPropertyValue('action'), 'DISPLAY');
    assert.match(String(rent.component.getFirstPropertyValue('url')), new RegExp(`note=${note.id}`));
    const dentist = events.find((event) => event.summary === 'Dentist')!;
    assert.equal(dentist.isRecurring(), false);

    const second = await owner.post('/api/reminders/feed');
    assert.notEqual(second.body.url, first.body.url);
    assert.equal((await fetch(new URL(url.pathname, server.url))).status, 404);
    const current = new URL(second.body.url).pathname;
    assert.equal((await fetch(new URL(current, server.url))).status, 200);
    assert.equal((await owner.delete('/api/reminders/feed')).status, 204);
    const ended = await fetch(new URL(current, server.url));
    assert.equal(ended.status, 404);
    assert.equal(((await ended.json()) as { code: string }).code, 'feed_not_found');
    // Only the hash is stored.
    const rows = await server.app.db.selectFrom('reminder_feeds').selectAll().execute();
    assert.deepEqual(rows, []);
  });

  it('stores only the hash of the token', async () => {
    const { url } = (await owner.post('/api/reminders/feed')).body;
    const token = url.split('/').at(-1);
    const [row] = await server.app.db.selectFrom('reminder_feeds').selectAll().execute();
    assert.ok(row && !JSON.stringify(row).includes(token));
    assert.equal((await fetch(new URL(`/api/reminders/feed/${'A'.repeat(43)}`, server.url))).status, 404);
  });
});

describe('the scheduler across a restart', () => {
  it('rings an occurrence missed while the server was down once, at start, and moves to the next', async () => {
    const pushService = await startPushService();
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 6));
    let server = await startServer({ clock, env: PRIVATE_PUSH });
    try {
      const owner = await setupOwner(server);
      await subscribe(owner, pushService);
      const note = (
        await owner.post('/api/notes', {
          title: 'Stretch',
          reminder: { at: '2026-06-01T07:00:00Z', repeat: 'daily', timeZone: 'Europe/Berlin' },
        })
      ).body;
      await server.close({ keepData: true });
      clock.advance(3 * DAY + 2 * 60 * MINUTE); // four occurrences missed: 1 to 4 June, 09:00 Berlin
      server = await startServer({ clock, env: PRIVATE_PUSH, dataDir: server.dataDir });
      await pushService.waitFor(1, 5_000);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      assert.equal(pushService.received.length, 1, 'missed occurrences ring once');
      const cookie = owner.cookies;
      const again = new (owner.constructor as typeof TestClient)(server.url, server.app);
      for (const [name, value] of cookie) again.cookies.set(name, value);
      const reminder = (await again.get(`/api/notes/${note.id}`)).body.reminder;
      assert.equal(reminder.nextAt, '2026-06-05T07:00:00.000Z');

      // And a restart right after ringing rings nothing again.
      await server.close({ keepData: true });
      server = await startServer({ clock, env: PRIVATE_PUSH, dataDir: server.dataDir });
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      assert.equal(pushService.received.length, 1);
    } finally {
      await server.close();
      await pushService.close();
    }
  });
});

/** `count` notes with a reminder at `at`, made through `client`; their ids. */
async function remindedNotes(client: TestClient, count: number, reminder: { at: string; repeat?: string }) {
  const ids = new Set<string>();
  for (let n = 0; n < count; n++) {
    const created = await client.post('/api/notes', { title: `r${n}`, reminder });
    assert.equal(created.status, 201, created.text);
    ids.add(created.body.id);
  }
  return ids;
}

describe('two server processes on one PostgreSQL database', {
  skip: !onPostgres && 'needs TEST_DATABASE_URL',
}, () => {
  it('ring each reminder once, whichever claims it', async () => {
    const pushService = await startPushService();
    try {
      await withServerProcesses(
        2,
        async ([first, second]) => {
          const owner = await setupOwner(first!.url);
          await subscribe(owner, pushService);
          // More than one tick's claim (CLAIM_LIMIT), so both processes have work in the same ticks.
          const count = CLAIM_LIMIT + 50;
          // One-offs: one made after `at` (a slow machine) still rings at once, where a repeat would
          // wait for its next occurrence.
          const ids = await remindedNotes(owner, count, { at: iso(Date.now() + 10_000) });
          await pushService.waitFor(count, 30_000);
          await new Promise((resolve) => setTimeout(resolve, 2_500));
          const rung = pushService.received.map((p) => p.payload.noteId as string);
          assert.equal(rung.length, count, 'each once');
          assert.deepEqual(new Set(rung), ids);
          assert.match(second!.output(), /Server listening/);
        },
        { envOf: () => PRIVATE_PUSH },
      );
    } finally {
      await pushService.close();
    }
  });
});

describe('a server process killed while it pushes a ring', () => {
  it('does not push that ring again from the next process, and rings on', async () => {
    const pushService = await startPushService();
    const dataDir = tempDataDir();
    const env = {
      DATA_DIR: dataDir,
      ...PRIVATE_PUSH,
      ...(onPostgres ? { DATABASE_URL: await databaseUrlFor(dataDir) } : {}),
    };
    const processes: ServerProcess[] = [];
    try {
      const dying = await spawnServer(env);
      processes.push(dying);
      const owner = await setupOwner(dying.url);
      await subscribe(owner, pushService);
      await subscribe(owner, pushService);
      pushService.holdAnswers(true);
      await remindedNotes(owner, 1, { at: iso(Date.now() + 1_000) });
      // Both pushes reached the push service; its answers, and so the ring's delete, never come.
      await pushService.waitFor(2, 10_000);
      const exited = once(dying.child, 'exit');
      dying.child.kill('SIGKILL');
      await exited;
      pushService.holdAnswers(false);

      // The next process's clock is past any lease the dead one's ring could still hold.
      const next = await spawnServer({ ...env, ...skewedClockEnv(3 * MINUTE) });
      processes.push(next);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      assert.equal(pushService.received.length, 2, 'the ring is not pushed a second time');
      assert.match(next.output(), /reminder rings whose sending process stopped are not sent again/);

      const again = new TestClient(next.url);
      for (const [name, value] of owner.cookies) again.cookies.set(name, value);
      const [noteId] = await remindedNotes(again, 1, { at: iso(Date.now() + 3 * MINUTE) });
      const received = await pushService.waitFor(4, 10_000);
      assert.deepEqual(
        received.slice(2).map((p) => p.payload.noteId),
        [noteId, noteId],
      );
    } finally {
      for (const server of processes) {
        const exited = once(server.child, 'exit');
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
        else continue;
        await exited;
      }
      await pushService.close();
      if (onPostgres) await dropDatabaseOf(dataDir);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
