/**
 * GET /api/notes, GET /api/notes/{id} and GET /api/sync send each note's answer from a cache
 * kept by note version (model/noteAnswers.ts, NoteJsonCache): after every kind of change that alters a note's answer,
 * both must say what the notes service's `get` (which never uses the cache) says, and who sees a
 * note must still be decided by the list's query and the by-id read's access decision.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { createNotesService } from '../src/features/notes/service.js';
import type { TestClient } from './helpers/client.js';
import { createUserClient } from './helpers/client.js';
import { ManualClock, useOwner, useServer } from './helpers/server.js';

describe('GET /api/notes and /api/notes/{id} from the note JSON cache', () => {
  // The clock stands still: a note deleted and created again gets the same version and
  // updatedAt, so only the note's doc_id tells the two apart.
  const clock = new ManualClock();
  let queries: string[] = [];
  const server = useServer({ clock, onQuery: (sql) => queries.push(sql) });
  const owner = useOwner(server);

  /** The note as the service's `get` makes it, with no cache, as the client would parse it. */
  async function uncached(client: TestClient, id: string): Promise<unknown> {
    const userId = (await client.get('/api/users/me')).body.id;
    const notes = createNotesService({ db: server.app.db, clock, trashRetentionDays: 30, notesDeleted: [] });
    const actor = {
      userId,
      isOwner: false,
      via: 'session' as const,
      scopes: new Set(['notes:read' as const]),
    };
    return JSON.parse(JSON.stringify(await notes.get(actor, id)));
  }

  /** Asserts that the list shows exactly `ids`, each note, listed and by id, as `get` makes it. */
  async function assertListShows(client: TestClient, ids: string[]): Promise<any[]> {
    const list = await client.get('/api/notes');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.map((note: { id: string }) => note.id).sort(), [...ids].sort());
    for (const listed of list.body) {
      const read = await client.get(`/api/notes/${listed.id}`);
      assert.equal(read.status, 200, read.text);
      assert.equal(read.headers.get('etag'), `"${listed.version}"`);
      const made = await uncached(client, listed.id);
      assert.deepEqual(listed, made);
      assert.deepEqual(read.body, made);
    }
    // The sync pull sends the same cached answers, archived and trashed notes included.
    const pulled = await client.get('/api/sync?since=0');
    assert.equal(pulled.status, 200, pulled.text);
    const pulledIds = pulled.body.map((note: { id: string }) => note.id);
    for (const id of ids) assert.ok(pulledIds.includes(id), `${id} is pulled`);
    for (const note of pulled.body) assert.deepEqual(note, await uncached(client, note.id));
    return list.body;
  }

  async function create(fields: Record<string, unknown>): Promise<string> {
    const response = await owner.post('/api/notes', fields);
    assert.equal(response.status, 201, response.text);
    return response.body.id;
  }

  it('reads an unchanged note once, and a changed one again', async () => {
    const first = await create({ title: 'first' });
    const second = await create({ title: 'second' });
    await assertListShows(owner, [first, second]);
    queries = [];
    await owner.get('/api/notes');
    const noteReads = () => queries.filter((q) => /from "notes" as "n" where "n"\."id" in/i.test(q)).length;
    assert.equal(noteReads(), 0, queries.join('\n'));
    assert.equal((await owner.patch(`/api/notes/${first}`, { title: 'first, edited' })).status, 200);
    queries = [];
    const [edited] = (await assertListShows(owner, [first, second])).filter((n) => n.id === first);
    assert.equal(edited.title, 'first, edited');
    assert.ok(noteReads() >= 1);
    for (const id of [first, second]) assert.equal((await owner.delete(`/api/notes/${id}`)).status, 200);
  });

  it('follows tags, attachments, sync pushes and a note created again under the same id', async () => {
    const id = await create({ title: 'groceries', content: 'milk' });
    await assertListShows(owner, [id]);

    assert.equal((await owner.patch(`/api/notes/${id}`, { content: 'milk #shop' })).status, 200);
    assert.deepEqual((await assertListShows(owner, [id]))[0].tags, ['shop']);

    const image = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#3a7' } })
      .png()
      .toBuffer();
    const body = new FormData();
    body.append('file', new Blob([image], { type: 'image/png' }), 'dot.png');
    const uploaded = await owner.request('POST', `/api/notes/${id}/attachments`, { body });
    assert.equal(uploaded.status, 201, uploaded.text);
    assert.deepEqual(
      (await assertListShows(owner, [id]))[0].attachments.map((a: { id: string }) => a.id),
      [uploaded.body.id],
    );
    const removed = await owner.delete(`/api/notes/${id}/attachments?attachmentId=${uploaded.body.id}`);
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual((await assertListShows(owner, [id]))[0].attachments, []);

    const pushed = await owner.post('/api/sync', {
      changes: [{ noteId: id, operation: 'update', timestamp: clock.now(), data: { title: 'pushed #sync' } }],
    });
    assert.equal(pushed.status, 200, pushed.text);
    const [synced] = await assertListShows(owner, [id]);
    assert.deepEqual([synced.title, synced.tags], ['pushed #sync', ['shop', 'sync']]);

    assert.equal((await owner.delete(`/api/notes/${id}`)).status, 200);
    const again = await create({ id, title: 'born again' });
    assert.equal(again, id);
    const [reborn] = await assertListShows(owner, [id]);
    assert.deepEqual([reborn.title, reborn.version, reborn.tags], ['born again', 1, []]);
    assert.equal((await owner.delete(`/api/notes/${id}`)).status, 200);
  });

  it('answers a search from the same cache, following edits', async () => {
    const id = await create({ title: 'zebra crossing', content: 'stripes' });
    const searched = async () => {
      const found = await owner.get('/api/search?q=zebra');
      assert.equal(found.status, 200, found.text);
      const [listed] = await assertListShows(owner, [id]);
      assert.deepEqual(found.body, [listed]);
      return listed;
    };
    await searched();
    assert.equal((await owner.patch(`/api/notes/${id}`, { content: 'stripes #road' })).status, 200);
    assert.deepEqual((await searched()).tags, ['road']);
    assert.equal((await owner.delete(`/api/notes/${id}`)).status, 200);
  });

  it('answers a by-id read from the cache, after deciding who may read it', async () => {
    const { client: stranger } = await createUserClient(
      server,
      `stranger-${randomUUID()}@example.com`,
      undefined,
      owner,
    );
    const id = await create({ title: 'cached #tagged', content: 'by id' });
    await assertListShows(owner, [id]);
    queries = [];
    const read = await owner.get(`/api/notes/${id}`);
    assert.equal(read.status, 200, read.text);
    const relationReads = queries.filter((q) => /note_tags|attachments/i.test(q));
    assert.deepEqual(relationReads, [], 'a cached answer reads no tags or attachments');
    const refused = await stranger.get(`/api/notes/${id}`);
    assert.equal(refused.status, 404, refused.text);
    assert.doesNotMatch(refused.text, /cached/);
    assert.equal((await owner.delete(`/api/notes/${id}`)).status, 200);
  });

  it('shows a cached note only to who may see it now', async () => {
    const { client: friend, userId: friendId } = await createUserClient(
      server,
      `friend-${randomUUID()}@example.com`,
      undefined,
      owner,
    );
    const id = await create({ title: 'shared for a while' });
    await assertListShows(owner, [id]);
    await assertListShows(friend, []);
    const shared = await owner.post(`/api/notes/${id}/collaborators`, { userId: friendId });
    assert.equal(shared.status, 201, shared.text);
    await assertListShows(friend, [id]);
    const unshared = await owner.delete(`/api/notes/${id}/collaborators?userId=${friendId}`);
    assert.equal(unshared.status, 200, unshared.text);
    await assertListShows(friend, []);
    await assertListShows(owner, [id]);
  });
});
