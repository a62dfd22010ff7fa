import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * Lists and search read note rows through visibleTo() (own notes or shared with the caller),
 * written for speed (docs/benchmarks.md); these tests pin the rule it must keep.
 */
describe('GET /api/notes and GET /api/search: which notes a user sees', () => {
  let server: TestServer;
  let owner: TestClient;
  let other: TestClient;
  let otherId: number;
  let sharedId: string;
  let privateId: string;

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server.url);
    ({ client: other, userId: otherId } = await createUserClient(server, 'other@example.com'));
    sharedId = (await owner.post('/api/notes', { title: 'wombat shared' })).body.id;
    privateId = (await owner.post('/api/notes', { title: 'wombat private' })).body.id;
    await other.post('/api/notes', { title: 'wombat mine' });
    // Collaborators are added by the collaboration feature; the row is all visibility needs.
    await server.app.db
      .insertInto('note_collaborators')
      .values({ note_id: sharedId, user_id: otherId, added_at: Date.now() })
      .execute();
  });
  after(() => server.close());

  it('lists own notes and notes shared with the caller, never other notes', async () => {
    const titles = (await other.get('/api/notes')).body.map((n: { title: string }) => n.title).sort();
    assert.deepEqual(titles, ['wombat mine', 'wombat shared']);
    const ownerTitles = (await owner.get('/api/notes')).body.map((n: { title: string }) => n.title).sort();
    assert.deepEqual(ownerTitles, ['wombat private', 'wombat shared']);
  });

  it('searches own notes and notes shared with the caller, never other notes', async () => {
    const found = (await other.get('/api/search?q=wombat')).body.map((n: { id: string }) => n.id);
    assert.equal(found.length, 2);
    assert.ok(found.includes(sharedId));
    assert.ok(!found.includes(privateId));
  });
});
