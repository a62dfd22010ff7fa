import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { sessionActor } from '../src/actor.js';
import { openDatabase } from '../src/db/connection.js';
import type { Db } from '../src/db/types.js';
import { createSearchService } from '../src/features/search/service.js';
import { deleteSearchDocuments, writeSearchDocument } from '../src/model/searchIndex.js';
import { findOwner } from '../src/model/users.js';
import { createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { sqliteMigratedBefore } from './helpers/migrations.js';
import { sqliteOnly } from './helpers/postgres.js';
import { ManualClock, startServer, type TestServer, tempDataDir } from './helpers/server.js';

describe('GET /api/search', () => {
  let server: TestServer;
  let owner: TestClient;
  let stranger: TestClient;
  const ids: Record<string, string> = {};

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
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

describe('GET /api/search: the last word as the index terms it starts (decision 0003)', () => {
  let server: TestServer;
  let owner: TestClient;
  const ids: Record<string, string> = {};
  const found = async (q: string) =>
    (
      (await owner.request('GET', `/api/search?q=${encodeURIComponent(q)}&limit=1000`)).body as {
        id: string;
      }[]
    )
      .map((note) => note.id)
      .sort();
  const idsOf = (...keys: string[]) => keys.map((key) => ids[key]!).sort();

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
    const notes: Record<string, string> = {
      meet: 'We meet at noon',
      meeting: 'Meeting notes and milk',
      meetings: 'MEETINGS all week',
      meetupTagged: 'See you there #meetups',
      meetupText: 'meetups later',
      other: 'meeu and ameeting are other words',
    };
    for (const [key, content] of Object.entries(notes))
      ids[key] = (await owner.post('/api/notes', { content })).body.id;
    // More words starting with `budg` than a query lists: the last word stays a prefix.
    for (let index = 0; index < 20; index++)
      ids[`budget${index}`] = (
        await owner.post('/api/notes', { content: `budg${String.fromCharCode(97 + index)}x` })
      ).body.id;
  });
  after(() => server.close());

  it('finds what the prefix finds: every word it starts, in any case, and no other', async () => {
    assert.deepEqual(await found('meet'), idsOf('meet', 'meeting', 'meetings', 'meetupTagged', 'meetupText'));
    assert.deepEqual(await found('MEETING'), idsOf('meeting', 'meetings'));
    assert.deepEqual(await found('milk meeti'), idsOf('meeting'));
    assert.deepEqual(await found('#meetu'), idsOf('meetupTagged'));
  });

  it('finds every note when the last word starts more terms than are listed', async () => {
    assert.deepEqual(
      await found('budg'),
      idsOf(...Array.from({ length: 20 }, (_, index) => `budget${index}`)),
    );
  });

  it('finds nothing when no word starts with the last one', async () => {
    assert.deepEqual(await found('meetz'), []);
    assert.deepEqual(await found('meeting zzzq'), []);
  });
});

describe('GET /api/search ranking window (decision 0003)', () => {
  let server: TestServer;
  let owner: TestClient;
  let stranger: TestClient;
  let ownerActor: ReturnType<typeof sessionActor>;
  let strangerActor: ReturnType<typeof sessionActor>;
  /** The service with a window of 3 newest matches, on the same database as the server. */
  let windowed: ReturnType<typeof createSearchService>;

  /** Each create lands 1 ms after the one before: "newest first" never meets a same-millisecond tie. */
  const clock = new ManualClock();

  before(async () => {
    server = await startServer({ clock });
    owner = await setupOwner(server);
    let strangerId: number;
    ({ client: stranger, userId: strangerId } = await createUserClient(server, 'stranger@example.com'));
    ownerActor = sessionActor((await findOwner(server.app.db))!);
    strangerActor = sessionActor({ id: strangerId, is_owner: 0 });
    windowed = createSearchService({ db: server.app.db, rankingWindow: 3 });
  });
  after(() => server.close());

  const create = async (client: TestClient, body: object): Promise<string> => {
    const response = await client.post('/api/notes', body);
    assert.equal(response.status, 201, response.text);
    clock.advance(1);
    return response.body.id;
  };
  const ids = (notes: { id: string }[]) => notes.map((n) => n.id);

  it('ranks only the newest matches by relevance once more notes match than the window holds', async () => {
    const oldestTitle = await create(owner, { title: 'apple', content: 'fruit' });
    await create(owner, { title: 'x', content: 'an apple a day' });
    const olderContent = await create(owner, { title: 'x', content: 'an apple a day' });
    const newerTitle = await create(owner, { title: 'apple', content: 'fruit' });
    const newestContent = await create(owner, { title: 'x', content: 'an apple a day' });

    // Window: the 3 newest matches. The title match ranks first; equal scores, newest first.
    const found = await windowed.search(ownerActor, { q: 'apple', limit: 3 });
    assert.deepEqual(ids(found), [newerTitle, newestContent, olderContent]);
    // The older title match is outside the window for this limit; the default window sees it.
    const all = (await owner.get('/api/search?q=apple')).body;
    assert.deepEqual(ids(all).slice(0, 2), [newerTitle, oldestTitle]);
    assert.equal(all.length, 5);
  });

  it('ranks every match exactly when fewer notes match than the window holds', async () => {
    const content = await create(owner, { title: 'x', content: 'a pear on the table' });
    const title = await create(owner, { title: 'pear', content: 'y' });
    await create(owner, { title: 'pear', content: 'y', trashed: true });
    const found = await windowed.search(ownerActor, { q: 'pear', limit: 3 });
    assert.deepEqual(ids(found), [title, content]);
  });

  it("counts the window in the caller's own matches: another user's newer notes neither crowd it nor widen it", async () => {
    const oldestTitle = await create(owner, { title: 'banana', content: 'mine' });
    const mine: string[] = [];
    for (let i = 0; i < 3; i++)
      mine.push(await create(owner, { title: 'x', content: `a banana, mine ${i}` }));
    for (let i = 0; i < 7; i++) await create(stranger, { title: 'banana', content: `theirs ${i}` });
    // The window is the owner's 3 newest matches: all found although 7 newer ones are the
    // stranger's, and the older title match stays outside it (a window over every user's
    // matches, widened until it held the owner's, would have ranked it first).
    const found = await windowed.search(ownerActor, { q: 'banana', limit: 3 });
    assert.deepEqual(ids(found).sort(), [...mine].sort());
    assert.ok(!ids(found).includes(oldestTitle));
    // The other user's own search stays within their notes.
    const theirs = await windowed.search(strangerActor, { q: 'banana', limit: 3 });
    assert.equal(theirs.length, 3);
    assert.ok(theirs.every((n) => !mine.includes(n.id) && n.id !== oldestTitle));
  });

  it('counts the window past trashed notes (D-SEARCH-2)', async () => {
    const kept = await create(owner, { title: 'cherry', content: 'kept' });
    for (let i = 0; i < 4; i++) await create(owner, { title: 'cherry', content: `gone ${i}`, trashed: true });
    assert.deepEqual(ids(await windowed.search(ownerActor, { q: 'cherry', limit: 1 })), [kept]);
  });

  it('is never smaller than the limit: a caller asking for more than the window gets every match', async () => {
    const dates: string[] = [];
    for (let i = 0; i < 5; i++) dates.push(await create(owner, { title: 'date', content: `${i}` }));
    const found = await windowed.search(ownerActor, { q: 'date', limit: 5 });
    assert.deepEqual(ids(found).sort(), [...dates].sort());
  });

  it('shares its window with notes shared with the caller', async () => {
    const theirs = await create(stranger, { title: 'elderberry', content: 'shared' });
    const shared = await stranger.post(`/api/notes/${theirs}/collaborators`, { userId: ownerActor.userId });
    assert.equal(shared.status, 201, shared.text);
    for (let i = 0; i < 5; i++) await create(stranger, { title: 'elderberry', content: `not shared ${i}` });
    assert.deepEqual(ids(await windowed.search(ownerActor, { q: 'elderberry', limit: 3 })), [theirs]);
  });
});

/**
 * Runs `check` on a database whose notes_fts held one document (rowid 42) before migration
 * `first` and the ones after it ran.
 */
async function afterMigration(
  first: string,
  document: { title: string; content: string; tags: string },
  check: (db: Db) => Promise<void>,
): Promise<void> {
  const dataDir = tempDataDir();
  const earlier = await sqliteMigratedBefore(dataDir, first);
  await sql`INSERT INTO notes_fts (rowid, title, content, tags)
            VALUES (42, ${document.title}, ${document.content}, ${document.tags})`.execute(earlier);
  await earlier.destroy();
  const database = await openDatabase(dataDir);
  try {
    await check(database.db);
  } finally {
    await database.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function matching(db: Db, match: string): Promise<{ rowid: number }[]> {
  return (
    await sql<{ rowid: number }>`SELECT rowid FROM notes_fts WHERE notes_fts MATCH ${match}`.execute(db)
  ).rows;
}

async function searchTableSql(db: Db): Promise<string> {
  const table = await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE name = 'notes_fts'`.execute(
    db,
  );
  return table.rows[0]!.sql;
}

describe('migration 0007_search_prefix_index', sqliteOnly, () => {
  it('rebuilds notes_fts with 2- and 3-character prefix indexes and keeps every indexed note', async () => {
    await afterMigration('0007', { title: 'Project plan', content: 'x', tags: '' }, async (db) => {
      assert.deepEqual(await matching(db, '"pr"*'), [{ rowid: 42 }]);
      assert.match(await searchTableSql(db), /prefix = '2 3'/);
    });
  });
});

describe('migration 0017_search_contentless', sqliteOnly, () => {
  it('rebuilds notes_fts without its copy of the text, keeps every indexed note, and replaces documents by rowid', async () => {
    await afterMigration('0017', { title: 'Project plan', content: 'budget', tags: 'work' }, async (db) => {
      assert.deepEqual(await matching(db, '"pr"*'), [{ rowid: 42 }]);
      assert.deepEqual(await matching(db, 'tags : "work"'), [{ rowid: 42 }]);
      const stored = await sql<{ title: string | null }>`SELECT title FROM notes_fts`.execute(db);
      assert.deepEqual(stored.rows, [{ title: null }], 'the index keeps no copy of the text');
      assert.match(await searchTableSql(db), /prefix = '2 3'/);
      // A note's edit replaces its document: the old words stop matching.
      await writeSearchDocument(db, 42, { title: 'Holiday', content: 'beach', tags: '' });
      assert.deepEqual(await matching(db, '"budget"'), []);
      assert.deepEqual(await matching(db, '"beach"'), [{ rowid: 42 }]);
      await deleteSearchDocuments(db, [42]);
      assert.deepEqual(await matching(db, '"beach"'), []);
    });
  });
});

describe('migration 0019_search_delete_merge', sqliteOnly, () => {
  it('merges a segment for its tombstones once half its documents are replaced, and replaced words stop matching', async () => {
    await afterMigration('0019', { title: 'Project plan', content: 'budget', tags: '' }, async (db) => {
      const setting = await sql<{
        v: number;
      }>`SELECT v FROM notes_fts_config WHERE k = 'deletemerge'`.execute(db);
      assert.deepEqual(setting.rows, [{ v: 50 }]);
      // Tombstones left unmerged: every replaced document still stops matching.
      for (let rowid = 1; rowid <= 40; rowid++) {
        await writeSearchDocument(db, rowid, { title: 'Draft', content: `first ${rowid}`, tags: '' });
      }
      for (let rowid = 1; rowid <= 40; rowid += 2) {
        await writeSearchDocument(db, rowid, { title: 'Final', content: `second ${rowid}`, tags: '' });
      }
      assert.equal((await matching(db, '"draft"')).length, 20);
      assert.equal((await matching(db, '"final"')).length, 20);
      assert.deepEqual(await matching(db, '"budget"'), [{ rowid: 42 }]);
    });
  });
});
