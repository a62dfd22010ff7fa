import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setupOwner, type TestClient } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

/** replaceNoteTags skips the writes when the hashtags did not change; these pin both sides. */
describe('PATCH /api/notes/{id}: tags follow the text (D-TAG-2)', () => {
  let server: TestServer;
  let owner: TestClient;
  before(async () => {
    server = await startServer();
    owner = await setupOwner(server.url);
  });
  after(() => server.close());

  const tagNames = async () => (await owner.get('/api/tags')).body.map((t: { name: string }) => t.name);

  it('replaces a hashtag swapped for another one (same number of tags)', async () => {
    const note = (await owner.post('/api/notes', { content: '#alpha #shared' })).body;
    const patched = await owner.patch(`/api/notes/${note.id}`, { content: '#omega #shared' });
    assert.deepEqual(patched.body.tags, ['omega', 'shared']);
    assert.deepEqual((await owner.get(`/api/notes/${note.id}`)).body.tags, ['omega', 'shared']);
    assert.deepEqual(await tagNames(), ['omega', 'shared']);
  });

  it('keeps the tags, and their ids, when an edit leaves the hashtags as they were', async () => {
    const note = (await owner.post('/api/notes', { title: 'first', content: 'text #keep' })).body;
    const before = (await owner.get('/api/tags')).body;
    const patched = await owner.patch(`/api/notes/${note.id}`, {
      title: 'second',
      content: 'other text #keep',
    });
    assert.deepEqual(patched.body.tags, ['keep']);
    assert.deepEqual((await owner.get('/api/tags')).body, before);
  });
});
