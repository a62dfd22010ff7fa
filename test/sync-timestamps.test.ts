import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { capFutureTimestamps, MAX_CLOCK_LEAD_MS } from '../src/features/sync/timestamps.js';
import { ManualClock, useOwner, useServer } from './helpers/server.js';

const T0 = Date.UTC(2026, 0, 1);
const YEAR = 365 * 86_400_000;

describe('capFutureTimestamps', () => {
  it('stamps with the server’s time only what is more than 5 minutes ahead of it', () => {
    const changes = [
      { noteId: 'a', timestamp: T0 - YEAR },
      { noteId: 'b', timestamp: T0 + MAX_CLOCK_LEAD_MS },
      { noteId: 'c', timestamp: T0 + MAX_CLOCK_LEAD_MS + 1 },
      { noteId: 'd', timestamp: 8.64e15 },
    ];
    assert.deepEqual(capFutureTimestamps(changes, T0), [
      { noteId: 'a', timestamp: T0 - YEAR },
      { noteId: 'b', timestamp: T0 + MAX_CLOCK_LEAD_MS },
      { noteId: 'c', timestamp: T0 },
      { noteId: 'd', timestamp: T0 },
    ]);
    assert.equal(changes[2]!.timestamp, T0 + MAX_CLOCK_LEAD_MS + 1, 'the pushed changes are not modified');
  });
});

describe('sync change timestamps from a device with a wrong or hostile clock', () => {
  const clock = new ManualClock(T0);
  const server = useServer({ clock });
  const owner = useOwner(server);

  const update = (noteId: string, timestamp: number, title: string, baseVersion?: number) => ({
    noteId,
    operation: 'update',
    timestamp,
    ...(baseVersion === undefined ? {} : { baseVersion }),
    data: { title },
  });

  async function newNote(title: string): Promise<string> {
    const response = await owner.post('/api/notes', { title });
    assert.equal(response.status, 201);
    return response.body.id;
  }

  it('answers 400 naming the index for timestamps no date can hold, and applies nothing', async () => {
    const noteId = await newNote('kept');
    for (const timestamp of [8.64e15 + 1, 9e15, 2 ** 53, 2 ** 53 + 2, 1e300, -1, 1.5]) {
      const response = await owner.post('/api/sync', {
        changes: [update(noteId, T0, 'first change'), update(noteId, timestamp, 'broken')],
      });
      assert.equal(response.status, 400, `${timestamp}: ${response.text}`);
      assert.equal(response.body.code, 'validation_failed');
      assert.equal(response.body.details[0].path, '/changes/1/timestamp', String(timestamp));
    }
    assert.equal((await owner.get(`/api/notes/${noteId}`)).body.title, 'kept');
  });

  it('never answers 500 for a stale change stamped after the last instant a Date holds', async () => {
    // Before: the first push was stored, the second lost to it and its conflict copy's title
    // needed new Date(8.7e15).toISOString(), which throws (500 "Invalid time value").
    const noteId = await newNote('mine');
    for (const [timestamp, title] of [
      [9e15, 'stamped beyond any date'],
      [8.7e15, 'stale beyond any date'],
    ] as const) {
      const response = await owner.post('/api/sync', { changes: [update(noteId, timestamp, title)] });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.details[0].path, '/changes/0/timestamp');
    }
    assert.equal((await owner.get(`/api/notes/${noteId}`)).body.title, 'mine');
  });

  it('does not let a clock years ahead lock a field against later edits', async () => {
    const noteId = await newNote('start');
    clock.advance(1_000);
    const future = await owner.post('/api/sync', {
      changes: [update(noteId, clock.now() + 10 * YEAR, 'squatted')],
    });
    assert.equal(future.body.results[0].status, 'applied');
    clock.advance(60_000);
    const honest = await owner.post('/api/sync', { changes: [update(noteId, clock.now(), 'edited later')] });
    assert.equal(honest.body.results[0].status, 'applied', honest.text);
    assert.equal((await owner.get(`/api/notes/${noteId}`)).body.title, 'edited later');
  });

  it('keeps the stamp of a clock less than 5 minutes ahead', async () => {
    const noteId = await newNote('start');
    const ahead = clock.now() + MAX_CLOCK_LEAD_MS - 1_000;
    assert.equal((await owner.post('/api/sync', { changes: [update(noteId, ahead, 'ahead')] })).status, 200);
    const earlier = await owner.post('/api/sync', { changes: [update(noteId, ahead - 1, 'earlier')] });
    assert.equal(earlier.body.results[0].reason, 'stale');
    assert.equal((await owner.get(`/api/notes/${noteId}`)).body.title, 'ahead');
  });

  it('creates a note pushed from the future with stamps any later edit beats', async () => {
    const noteId = randomUUID();
    const created = await owner.post('/api/sync', {
      changes: [{ noteId, operation: 'create', timestamp: 8.64e15, data: { title: 'from the future' } }],
    });
    assert.equal(created.status, 200, created.text);
    clock.advance(1_000);
    const later = await owner.post('/api/sync', { changes: [update(noteId, clock.now(), 'now')] });
    assert.equal(later.body.results[0].status, 'applied');
  });
});
