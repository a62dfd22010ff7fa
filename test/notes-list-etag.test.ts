/**
 * GET /api/notes sends an ETag naming the list's notes at their versions; If-None-Match with it
 * gets 304 while nothing in the list changed, and every change that shows in the list changes it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { createUserClient, type TestClient } from './helpers/client.js';
import { useOwner, useServer } from './helpers/server.js';

describe('GET /api/notes: ETag and If-None-Match', () => {
  const server = useServer();
  const owner = useOwner(server);

  async function list(client: TestClient = owner, path = '/api/notes') {
    const response = await client.get(path);
    assert.equal(response.status, 200, response.text);
    const etag = response.headers.get('etag');
    assert.ok(etag, 'the list has an ETag');
    return { etag, text: response.text };
  }

  it('answers 304 with no body while the list is unchanged, 200 once it changed', async () => {
    const note = (await owner.post('/api/notes', { title: 'etag' })).body;
    const first = await list();
    const again = await owner.get('/api/notes', { headers: { 'if-none-match': first.etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    assert.equal(again.headers.get('etag'), first.etag);
    assert.equal((await owner.get('/api/notes', { headers: { 'if-none-match': '"other"' } })).status, 200);
    assert.equal(
      (await owner.get('/api/notes', { headers: { 'if-none-match': `W/${first.etag}` } })).status,
      304,
    );

    await owner.patch(`/api/notes/${note.id}`, { title: 'etag changed' });
    const changed = await owner.get('/api/notes', { headers: { 'if-none-match': first.etag } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get('etag'), first.etag);
    assert.match(changed.text, /etag changed/);
  });

  it('changes with every change that shows in the list, and only then', async () => {
    const client = (await createUserClient(server, 'lists@example.com')).client;
    const friend = await createUserClient(server, 'friend-of-lists@example.com');
    const note = (await client.post('/api/notes', { title: 'a #one', content: 'text' })).body;
    const other = (await client.post('/api/notes', { title: 'b' })).body;
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#123' } })
      .png()
      .toBuffer();
    let attachmentId = '';
    const changes: [string, () => Promise<unknown>][] = [
      ['content', () => client.patch(`/api/notes/${note.id}`, { content: 'new #two' })],
      ['pinned', () => client.patch(`/api/notes/${other.id}`, { pinned: true })],
      ['sort order', () => client.patch(`/api/notes/${note.id}`, { sortOrder: 3 })],
      ['colour', () => client.patch(`/api/notes/${note.id}`, { color: 'sage' })],
      [
        'attachment added',
        async () => {
          const form = new FormData();
          form.append('file', new Blob([png], { type: 'image/png' }), 'dot.png');
          const response = await client.request('POST', `/api/notes/${note.id}/attachments`, { body: form });
          attachmentId = response.body.id;
        },
      ],
      [
        'attachment removed',
        () => client.delete(`/api/notes/${note.id}/attachments?attachmentId=${attachmentId}`),
      ],
      ['note created', () => client.post('/api/notes', { title: 'c' })],
      ['note trashed', () => client.patch(`/api/notes/${other.id}`, { trashed: true })],
    ];
    let previous = await list(client);
    for (const [name, change] of changes) {
      const response = (await change()) as { status: number } | undefined;
      assert.ok(!response || response.status < 300, `${name}: ${response?.status}`);
      const next = await list(client);
      assert.notEqual(next.text, previous.text, `${name} shows in the list`);
      assert.notEqual(next.etag, previous.etag, `${name} changes the ETag`);
      previous = next;
    }
    // Writing the values a note already has changes nothing, so the ETag stays.
    await client.patch(`/api/notes/${note.id}`, { color: 'sage', sortOrder: 3 });
    assert.deepEqual(await list(client), previous);

    // Another user's list, and another filter of the same list, have ETags of their own.
    const before = await list(friend.client);
    assert.notEqual(before.etag, previous.etag);
    assert.notEqual((await list(client, '/api/notes?filter=trashed')).etag, previous.etag);
    await client.post(`/api/notes/${note.id}/collaborators`, { userId: friend.userId });
    assert.notEqual((await list(friend.client)).etag, before.etag, 'a note shared with the user');
  });
});
