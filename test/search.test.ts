import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

describe('GET /api/search', () => {
  let server: TestServer;
  let owner: TestClient;
  let stranger: TestClient;
  const ids: Record<string, string> = {};

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server.url);
    ({ client: stranger } = await createUserClient(server, 'stranger@example.com'));
    const notes: Record<string, object> = {
      groceries: { title: 'Groceries', content: 'Buy milk and bread' },
      milkshake: { title: 'Recipes', content: 'Milkshake with bananas' },
      cafe: { title: 'Café Crème', content: 'Visit the ÉCOLE' },
      tagged: { title: 'Plans', content: 'Quarter plans #Work/Q3' },
      mentions: { title: 'Office', content: 'The word work appears in text only' },
      tokyo: { title: '旅行', content: '東京タワーに行く' },
      archived: { title: 'Old milk receipt', archived: true },
      trashed: { title: 'Trashed milk', trashed: true },
    };
    for (const [key, body] of Object.entries(notes)) {
      ids[key] = (await owner.post('/api/notes', body)).body.id;
    }
    await stranger.post('/api/notes', { title: 'Stranger milk' });
  });
  after(() => server.close());

  const search = async (q: string, client = owner) => {
    const response = await client.get(`/api/search?q=${encodeURIComponent(q)}`);
    assert.equal(response.status, 200, `${q}: ${response.text}`);
    return response.body.map((n: any) => Object.keys(ids).find((k) => ids[k] === n.id) ?? n.title).sort();
  };

  it('matches every word (AND) in title or content', async () => {
    assert.deepEqual(await search('buy bread'), ['groceries']);
    assert.deepEqual(await search('bread bananas'), []);
  });

  it('matches the last word as a prefix (search as you type)', async () => {
    assert.deepEqual(await search('milksh'), ['milkshake']);
    assert.deepEqual(await search('milk'), ['archived', 'groceries', 'milkshake']);
  });

  it('ignores case and accents (D-SEARCH-1)', async () => {
    assert.deepEqual(await search('CAFE creme'), ['cafe']);
    assert.deepEqual(await search('ecole'), ['cafe']);
    assert.deepEqual(await search('École'), ['cafe']);
  });

  it('matches tag names, and #word only in tags', async () => {
    assert.deepEqual(await search('work'), ['mentions', 'tagged']);
    assert.deepEqual(await search('#work'), ['tagged']);
    assert.deepEqual(await search('#wo'), ['tagged']);
    assert.deepEqual(await search('#q3 plans'), ['tagged']);
  });

  it('finds substrings of CJK text', async () => {
    assert.deepEqual(await search('京タワ'), ['tokyo']);
    assert.deepEqual(await search('タワー'), ['tokyo']);
    assert.deepEqual(await search('旅'), ['tokyo']);
  });

  it('includes archived notes and excludes trashed ones (D-SEARCH-2)', async () => {
    const found = await search('milk');
    assert.ok(found.includes('archived'));
    assert.ok(!found.includes('trashed'));
  });

  it("never returns another user's notes", async () => {
    assert.deepEqual(await search('stranger'), []);
    assert.deepEqual(await search('milk', stranger), ['Stranger milk']);
  });

  it('treats FTS syntax as plain text and never errors', async () => {
    for (const q of [
      '"',
      '"milk',
      'milk*',
      '*',
      'AND',
      'milk AND',
      'NOT milk',
      '-milk',
      '(milk',
      'milk)',
      'a:b',
      '^milk',
      'NEAR(milk bread)',
      "'; DROP TABLE notes; --",
      '\\',
      '#',
      '##',
      '{title}: x',
    ]) {
      const response = await owner.get(`/api/search?q=${encodeURIComponent(q)}`);
      assert.equal(response.status, 200, `${q} → ${response.status} ${response.text}`);
      assert.ok(Array.isArray(response.body));
    }
    assert.deepEqual(await search('"milk'), ['archived', 'groceries', 'milkshake']);
  });

  it('answers 400 when q is missing, empty or only spaces', async () => {
    for (const query of ['', '?q=', '?q=%20%20', '?q=%09']) {
      const response = await owner.get(`/api/search${query}`);
      assert.equal(response.status, 400, query);
      assert.equal(response.body.code, 'validation_failed');
    }
  });

  it('bounds results with limit (default 100, at most 1,000)', async () => {
    assert.equal((await owner.get('/api/search?q=milk&limit=1')).body.length, 1);
    assert.equal((await owner.get('/api/search?q=milk&limit=0')).status, 400);
    assert.equal((await owner.get('/api/search?q=milk&limit=1001')).status, 400);
    assert.equal((await owner.get('/api/search?q=milk&limit=abc')).status, 400);
  });

  it('orders by relevance: a title match ranks above a content match', async () => {
    const a = (await owner.post('/api/notes', { title: 'zebra', content: 'x' })).body.id;
    const b = (
      await owner.post('/api/notes', {
        title: 'x',
        content: 'a long text that mentions zebra once among many other words',
      })
    ).body.id;
    const results = (await owner.get('/api/search?q=zebra')).body.map((n: any) => n.id);
    assert.deepEqual(results, [a, b]);
  });

  it('stays in step with edits and deletions, and carries tags and attachments', async () => {
    const note = (await owner.post('/api/notes', { title: 'ephemeral kiwi #fruit' })).body;
    const [hit] = (await owner.get('/api/search?q=kiwi')).body;
    assert.deepEqual(hit.tags, ['fruit']);
    assert.deepEqual(hit.attachments, []);
    await owner.patch(`/api/notes/${note.id}`, { title: 'ephemeral mango' });
    assert.deepEqual(await search('kiwi'), []);
    assert.equal((await search('mango')).length, 1);
    await owner.delete(`/api/notes/${note.id}`);
    assert.deepEqual(await search('mango'), []);
  });
});
