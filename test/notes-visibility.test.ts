import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findNotesWithRole } from '../src/model/notes.js';
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
    owner = await setupOwner(server);
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

/**
 * Every reader of notes against the same cases (src/model/visibility.ts): a note shared
 * with a collaborator, a note its owner keeps private, a collaborator's own note, and a user
 * who has no notes and nothing shared. Each note carries a hashtag of its own, so the tags a
 * reader lists say which notes it counted.
 */
describe('every reader of notes applies the one visibility rule (D-COLLAB-1)', () => {
  const NOTES = ['shared', 'private', 'mine'] as const;
  type NoteName = (typeof NOTES)[number];
  /** Who may see each note: the owner sees shared and private, the collaborator shared and mine. */
  const SEES: Record<'owner' | 'collaborator' | 'stranger', NoteName[]> = {
    owner: ['private', 'shared'],
    collaborator: ['mine', 'shared'],
    stranger: [],
  };

  let server: TestServer;
  const clients = {} as Record<keyof typeof SEES, { client: TestClient; userId: number }>;
  const ids = {} as Record<NoteName, string>;
  const nameOf = (id: string) => NOTES.find((name) => ids[name] === id) ?? id;

  before(async () => {
    server = await startServer();
    const owner = await setupOwner(server);
    clients.collaborator = await createUserClient(server, 'collaborator@example.com', undefined, owner);
    clients.stranger = await createUserClient(server, 'stranger@example.com', undefined, owner);
    const create = async (client: TestClient, name: NoteName) =>
      (await client.post('/api/notes', { title: `quokka ${name}`, content: `#tag${name}` })).body.id;
    ids.shared = await create(owner, 'shared');
    clients.owner = { client: owner, userId: (await owner.get(`/api/notes/${ids.shared}`)).body.ownerId };
    ids.private = await create(owner, 'private');
    ids.mine = await create(clients.collaborator.client, 'mine');
    const shared = await owner.post(`/api/notes/${ids.shared}/collaborators`, {
      userId: clients.collaborator.userId,
    });
    assert.equal(shared.status, 201, shared.text);
  });
  after(() => server.close());

  /** The notes each reader shows the user, by name. */
  const READERS: Record<string, (user: { client: TestClient; userId: number }) => Promise<string[]>> = {
    'list (GET /api/notes)': async ({ client }) =>
      (await client.get('/api/notes')).body.map((n: { id: string }) => nameOf(n.id)),
    'get (GET /api/notes/{id})': async ({ client }) => {
      const statuses = await Promise.all(
        NOTES.map(async (name) => (await client.get(`/api/notes/${ids[name]}`)).status),
      );
      return NOTES.filter((_, i) => statuses[i] === 200);
    },
    'search (GET /api/search)': async ({ client }) =>
      (await client.get('/api/search?q=quokka')).body.map((n: { id: string }) => nameOf(n.id)),
    'tags (GET /api/tags)': async ({ client }) =>
      (await client.get('/api/tags')).body.map((tag: { name: string }) => tag.name.replace(/^tag/, '')),
    'sync pull (GET /api/sync)': async ({ client }) =>
      (await client.get('/api/sync?since=0')).body.map((n: { id: string }) => nameOf(n.id)),
    findNotesWithRole: async ({ userId }) => {
      const found = await findNotesWithRole(server.app.db, Object.values(ids), userId);
      return [...found.values()]
        .filter((entry) => entry.role !== undefined)
        .map((entry) => nameOf(entry.note.id));
    },
  };

  for (const [reader, read] of Object.entries(READERS)) {
    for (const user of Object.keys(SEES) as (keyof typeof SEES)[]) {
      it(`${reader}: the ${user} sees ${SEES[user].join(' and ') || 'nothing'}`, async () => {
        assert.deepEqual((await read(clients[user])).sort(), SEES[user]);
      });
    }
  }
});
