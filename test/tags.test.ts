import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { clientOf, createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { useServer } from './helpers/server.js';

describe('GET /api/tags (D-TAG-2)', () => {
  const server = useServer();
  let owner: TestClient;
  let stranger: TestClient;
  before(async () => {
    owner = await setupOwner(server);
    ({ client: stranger } = await createUserClient(server, 'stranger@example.com'));
  });

  const names = async (client = owner) => (await client.get('/api/tags')).body.map((t: any) => t.name);

  it('lists the tags of visible, not trashed notes, sorted by name, with stable ids', async () => {
    const a = (await owner.post('/api/notes', { title: '#zeta', content: '#Alpha #beta' })).body;
    await owner.post('/api/notes', { content: '#beta', archived: true });
    await owner.post('/api/notes', { content: '#trashonly', trashed: true });
    const first = (await owner.get('/api/tags')).body;
    assert.deepEqual(
      first.map((t: any) => t.name),
      ['alpha', 'beta', 'zeta'],
    );
    assert.ok(first.every((t: any) => Number.isInteger(t.id)));
    await owner.patch(`/api/notes/${a.id}`, { title: '#zeta again' });
    const second = (await owner.get('/api/tags')).body;
    assert.deepEqual(second, first);
  });

  it('drops a tag once no note uses it any more', async () => {
    const note = (await owner.post('/api/notes', { content: '#temporary' })).body;
    assert.ok((await names()).includes('temporary'));
    await owner.patch(`/api/notes/${note.id}`, { content: 'no more tags' });
    assert.ok(!(await names()).includes('temporary'));
    const count = await server.app.db
      .selectFrom('tags')
      .select('id')
      .where('name', '=', 'temporary')
      .execute();
    assert.equal(count.length, 0);
  });

  it('drops the tags of a deleted note', async () => {
    const note = (await owner.post('/api/notes', { content: '#doomed' })).body;
    assert.ok((await names()).includes('doomed'), 'the tag exists before the delete');
    const deleted = await owner.delete(`/api/notes/${note.id}`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal((await owner.get(`/api/notes/${note.id}`)).status, 404);
    assert.ok(!(await names()).includes('doomed'));
    const rows = await server.app.db.selectFrom('tags').select('id').where('name', '=', 'doomed').execute();
    assert.equal(rows.length, 0);
  });

  it('never shows another user’s tags', async () => {
    await stranger.post('/api/notes', { content: '#secretplan' });
    assert.ok(!(await names()).includes('secretplan'));
    assert.deepEqual(await names(stranger), ['secretplan']);
  });

  it('answers 401 without a session', async () => {
    assert.equal((await clientOf(server).get('/api/tags')).status, 401);
  });
});
