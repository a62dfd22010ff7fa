/**
 * A list, and a search's ranking, is kept while the database is unchanged (src/db/keptReads.ts)
 * and read again after any change: made by this server, in each way a list can change, or
 * committed by another connection to the same file (a command run beside the server).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import type { Actor } from '../src/actor.js';
import { createSearchService } from '../src/features/search/service.js';
import { type ListFilter, listNotes } from '../src/model/notes.js';
import { ALL_SCOPES } from '../src/shared/api/apiKeys.js';
import { createUserClient } from './helpers/client.js';
import { sqliteOnly } from './helpers/postgres.js';
import { useOwner, useServer } from './helpers/server.js';

/** The list query's text, as Kysely compiles it (the order every list has). */
const isListQuery = (sql: string) => sql.includes('order by "n"."pinned" desc');

/** The ranked search's text (src/model/searchIndex.ts). */
const isSearchQuery = (sql: string) => sql.includes('notes_fts MATCH');

/** Searches of each kind: a word, a prefix, two words, a tag, a word only the other user has. */
const SEARCHES = ['kept', 'ke', 'kept edit', '#home', 'home', 'theirs'];

const FILTERS: ListFilter[] = [
  { filter: 'all' },
  { filter: 'archived' },
  { filter: 'trashed' },
  { filter: 'all', tag: 'home' },
  { filter: 'all', pinned: true },
  { filter: 'all', color: 'mint' },
  { filter: 'all', limit: 2 },
];

describe('kept lists', sqliteOnly, () => {
  let queries: string[] = [];
  const server = useServer({ onQuery: (sql) => queries.push(sql) });
  const owner = useOwner(server);

  it('reads a list once while nothing changes, and again after a change', async () => {
    const note = (await owner.post('/api/notes', { title: 'kept' })).body;
    const first = await owner.get('/api/notes');
    queries = [];
    const again = await owner.get('/api/notes');
    const unchanged = await owner.get('/api/notes', {
      headers: { 'if-none-match': first.headers.get('etag')! },
    });
    assert.equal(again.text, first.text);
    assert.equal(unchanged.status, 304);
    assert.deepEqual(queries.filter(isListQuery), [], 'no list query while nothing changed');

    await owner.patch(`/api/notes/${note.id}`, { title: 'kept, then changed' });
    queries = [];
    const changed = await owner.get('/api/notes');
    assert.equal(queries.filter(isListQuery).length, 1);
    assert.match(changed.text, /kept, then changed/);
  });

  it('sends a list answered twice while nothing changes from one kept answer, made again after a change', async () => {
    // A reminder makes every answer of the list ask for the reader's reminders: a kept answer does not.
    const note = (await owner.post('/api/notes', { title: 'whole' })).body;
    await owner.patch(`/api/notes/${note.id}`, { reminder: { at: '2031-01-01T00:00:00Z' } });
    const isRemindersRead = (sql: string) => sql.includes('from "reminders" where "user_id" = ?');
    const first = await owner.get('/api/notes');
    const second = await owner.get('/api/notes');
    queries = [];
    const third = await owner.get('/api/notes');
    assert.deepEqual(queries.filter(isRemindersRead), [], 'the third answer is the kept one');
    assert.equal(second.text, first.text);
    assert.equal(third.text, first.text);
    assert.equal(third.headers.get('content-length'), String(Buffer.byteLength(third.text)));
    const answered = (response: { body: { id: string; reminder: unknown }[] }) =>
      response.body.find((listed) => listed.id === note.id)?.reminder;
    assert.deepEqual(answered(third), { ...(answered(first) as object) });

    await owner.patch(`/api/notes/${note.id}`, { reminder: { at: '2032-02-02T00:00:00Z' } });
    queries = [];
    const changed = await owner.get('/api/notes');
    assert.equal(queries.filter(isRemindersRead).length, 1);
    assert.match(JSON.stringify(answered(changed)), /2032-02-02/);
  });

  it('keeps a search asked twice while nothing changes, and ranks again after a change', async () => {
    const note = (await owner.post('/api/notes', { title: 'searched kept' })).body;
    queries = [];
    const first = await owner.get('/api/search?q=searched');
    const second = await owner.get('/api/search?q=searched');
    assert.equal(queries.filter(isSearchQuery).length, 2, 'a search asked once is not kept');
    queries = [];
    const third = await owner.get('/api/search?q=searched');
    assert.equal(second.text, first.text);
    assert.equal(third.text, first.text);
    assert.deepEqual(queries.filter(isSearchQuery), [], 'no ranking while nothing changed');
    await owner.get('/api/search?q=searched&limit=1');
    const fewer = await owner.get('/api/search?q=searched&limit=1');
    assert.equal(queries.filter(isSearchQuery).length, 2, 'another limit is another ranking');
    assert.equal(fewer.body.length, 1);

    await owner.patch(`/api/notes/${note.id}`, { title: 'searched, then changed' });
    queries = [];
    const changed = await owner.get('/api/search?q=searched');
    assert.equal(queries.filter(isSearchQuery).length, 1);
    assert.match(changed.text, /searched, then changed/);
  });

  it('answers what a fresh read answers after every kind of change, for every user and filter', async () => {
    const { db } = server.app;
    const other = await createUserClient(server, 'kept-lists@example.com');
    const ownerId = (await owner.get('/api/auth/status')).body.user.id as number;
    const users = [ownerId, other.userId];
    const ids: string[] = [];
    const changes: [string, () => Promise<{ status: number }>][] = [
      ['create', () => create('a')],
      ['create another', () => create('b')],
      ['create a third', () => create('c')],
      ['edit', () => owner.patch(`/api/notes/${ids[0]}`, { title: 'kept a, edited' })],
      ['tag', () => owner.patch(`/api/notes/${ids[1]}`, { content: 'now #home' })],
      ['pin', () => owner.patch(`/api/notes/${ids[2]}`, { pinned: true })],
      ['colour', () => owner.patch(`/api/notes/${ids[0]}`, { color: 'mint' })],
      ['reorder', () => owner.patch(`/api/notes/${ids[1]}`, { sortOrder: -5 })],
      ['share', () => owner.post(`/api/notes/${ids[0]}/collaborators`, { userId: other.userId })],
      ['unshare', () => owner.delete(`/api/notes/${ids[0]}/collaborators?userId=${other.userId}`)],
      ['archive', () => owner.patch(`/api/notes/${ids[1]}`, { archived: true })],
      ['trash', () => owner.patch(`/api/notes/${ids[2]}`, { trashed: true })],
      ['restore', () => owner.patch(`/api/notes/${ids[2]}`, { trashed: false })],
      ['delete', () => owner.delete(`/api/notes/${ids[0]}`)],
      ['create as the other user', () => other.client.post('/api/notes', { title: 'theirs' })],
    ];
    async function create(title: string) {
      const created = await owner.post('/api/notes', { title: `kept ${title}` });
      ids.push(created.body.id);
      return created;
    }
    const fresh = (userId: number, filter: ListFilter) =>
      db.transaction().execute((trx) => listNotes(trx, userId, filter));
    const { search } = server.app.services;
    const actorOf = (userId: number): Actor => ({
      userId,
      isOwner: false,
      via: 'session',
      scopes: new Set(ALL_SCOPES),
    });
    // Each found note's id and version: what a ranking is.
    const found = async (searching: typeof search, userId: number, q: string) =>
      (await searching.search(actorOf(userId), { q })).map((note) => `${note.id}@${note.version}`);
    const freshlyFound = (userId: number, q: string) =>
      db.transaction().execute((trx) => found(createSearchService({ db: trx }), userId, q));
    // The REST list's notes, each as id@version, and the same of a fresh read.
    const clientOfUser = (userId: number) => (userId === ownerId ? owner : other.client);
    const sent = async (userId: number) =>
      (await clientOfUser(userId).get('/api/notes')).body.map(
        (note: { id: string; version: number }) => `${note.id}@${note.version}`,
      );
    const freshlySent = async (userId: number) =>
      (await fresh(userId, { filter: 'all' })).map((note) => `${note.id}@${note.version}`);
    for (const [change, make] of changes) {
      for (const userId of users) {
        // Twice, so that the answer is kept whole.
        await sent(userId);
        await sent(userId);
        for (const filter of FILTERS) await listNotes(db, userId, filter);
        // Twice, so that each ranking is kept.
        for (const q of SEARCHES) await found(search, userId, q);
        for (const q of SEARCHES) await found(search, userId, q);
      }
      const made = await make();
      assert.ok(made.status < 300, `${change}: ${made.status}`);
      for (const userId of users) {
        assert.deepEqual(
          await sent(userId),
          await freshlySent(userId),
          `after "${change}", user ${userId}, sent`,
        );
        for (const filter of FILTERS) {
          assert.deepEqual(
            await listNotes(db, userId, filter),
            await fresh(userId, filter),
            `after "${change}", user ${userId}, ${JSON.stringify(filter)}`,
          );
        }
        for (const q of SEARCHES) {
          assert.deepEqual(
            await found(search, userId, q),
            await freshlyFound(userId, q),
            `after "${change}", user ${userId}, search "${q}"`,
          );
        }
      }
    }
  });

  /** Moves the note to Trash through a connection of its own, as a command beside the server would. */
  function trashElsewhere(noteId: string) {
    const elsewhere = new SQLite(path.join(server.dataDir, 'notes.db'));
    try {
      elsewhere
        .prepare('UPDATE notes SET trashed = 1, trashed_at = 1, version = version + 1 WHERE id = ?')
        .run(noteId);
    } finally {
      elsewhere.close();
    }
  }

  it("sees another connection's commit to the same database", async () => {
    const note = (await owner.post('/api/notes', { title: 'changed elsewhere' })).body;
    const listed = async () =>
      (await owner.get('/api/notes')).body.map((n: { id: string }) => n.id) as string[];
    assert.ok((await listed()).includes(note.id));
    trashElsewhere(note.id);
    assert.ok(!(await listed()).includes(note.id));
  });

  it("searches what another connection's commit changed", async () => {
    const note = (await owner.post('/api/notes', { title: 'elsewhere' })).body;
    const searched = async () => (await owner.get('/api/search?q=elsewhere')).body.length as number;
    assert.equal(await searched(), 1);
    assert.equal(await searched(), 1, 'kept from here');
    trashElsewhere(note.id);
    assert.equal(await searched(), 0);
  });
});
