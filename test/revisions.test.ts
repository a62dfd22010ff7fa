import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import fc from 'fast-check';
import { type Kysely, sql } from 'kysely';
import { openDatabase } from '../src/db/connection.js';
import { up as addRevisions } from '../src/db/migrations/0009_note_revisions.js';
import { up as indexRevisionsByAge } from '../src/db/migrations/0015_revision_age_index.js';
import { up as dropRevisionAgeIndex } from '../src/db/migrations/0018_revision_age_index_dropped.js';
import { up as rebuildRevisionsWithRowids } from '../src/db/migrations/0020_revisions_rowid.js';
import type { Db } from '../src/db/types.js';
import { insertNote } from '../src/model/noteWrites.js';
import { REVISION_RETENTION_DAYS, REVISIONS_KEPT, recordRevision } from '../src/model/revisions.js';
import { insertUser } from '../src/model/users.js';
import { clientOf, createUserClient, OWNER_PASSWORD, setupOwner, type TestClient } from './helpers/client.js';
import { sqliteOnly } from './helpers/postgres.js';
import { ManualClock, startServer, type TestServer, tempDataDir } from './helpers/server.js';
import { type Change, type PushResult, push } from './helpers/sync.js';

/** Revisions of a note's title and content, and GET /api/notes/{id}/revisions (D-SYNC-9). */

const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const OWNER_EMAIL = 'revisions-owner@example.com';

interface Revision {
  version: number;
  createdAt: string;
  authorId: number;
  title: string;
  content: string;
}

async function revisionsOf(client: TestClient, id: string): Promise<Revision[]> {
  const response = await client.get(`/api/notes/${id}/revisions`);
  assert.equal(response.status, 200, response.text);
  return response.body;
}

async function pushOne(client: TestClient, change: Change): Promise<PushResult> {
  return (await push(client, [change]))[0]!;
}

describe('note revisions (D-SYNC-9)', () => {
  let server: TestServer;
  let owner: TestClient;
  let ownerId: number;
  let collaborator: { client: TestClient; userId: number };
  let stranger: { client: TestClient; userId: number };
  let removedUser: { client: TestClient; userId: number };
  let removedUsersNote: string;
  const clock = new ManualClock(T0);
  before(async () => {
    server = await startServer({ clock });
    owner = await setupOwner(server, { email: OWNER_EMAIL });
    ownerId = (await owner.get('/api/auth/status')).body.user.id;
    collaborator = await createUserClient(server, 'revisions-collab@example.com');
    stranger = await createUserClient(server, 'revisions-stranger@example.com');
    removedUser = await createUserClient(server, 'revisions-removed@example.com');
    removedUsersNote = (await removedUser.client.post('/api/notes', { content: 'theirs' })).body.id;
  });
  after(() => server.close());

  /** Moves the clock on; the owner signs in again, as sessions expire meanwhile. */
  async function later(ms: number) {
    clock.advance(ms);
    const response = await owner.post('/api/auth/login', { email: OWNER_EMAIL, password: OWNER_PASSWORD });
    assert.equal(response.status, 200, response.text);
  }

  it('records every change of title or content through REST, sync and create, newest first', async () => {
    const note = (await owner.post('/api/notes', { title: 'Trip', content: 'passport' })).body;
    await owner.post(`/api/notes/${note.id}/collaborators`, { userId: collaborator.userId });
    clock.advance(1000);
    await owner.patch(`/api/notes/${note.id}`, { title: 'Trip to Lisbon' });
    clock.advance(1000);
    await owner.patch(`/api/notes/${note.id}`, { pinned: true, color: 'mint' }); // no text: no revision
    clock.advance(1000);
    const pushed = await pushOne(collaborator.client, {
      noteId: note.id,
      operation: 'update',
      timestamp: clock.now(),
      data: { content: 'passport\ntickets' },
    });
    assert.equal(pushed.version, 4);
    const revisions = await revisionsOf(owner, note.id);
    assert.deepEqual(revisions, [
      {
        version: 4,
        createdAt: new Date(T0 + 3000).toISOString(),
        authorId: collaborator.userId,
        title: 'Trip to Lisbon',
        content: 'passport\ntickets',
      },
      {
        version: 2,
        createdAt: new Date(T0 + 1000).toISOString(),
        authorId: ownerId,
        title: 'Trip to Lisbon',
        content: 'passport',
      },
      {
        version: 1,
        createdAt: new Date(T0).toISOString(),
        authorId: ownerId,
        title: 'Trip',
        content: 'passport',
      },
    ]);
    assert.deepEqual(await revisionsOf(collaborator.client, note.id), revisions);
  });

  it('records the version 1 of a note created by a sync push', async () => {
    const id = randomUUID();
    await pushOne(owner, { noteId: id, operation: 'create', timestamp: T0, data: { content: 'offline' } });
    assert.deepEqual(
      (await revisionsOf(owner, id)).map((r) => [r.version, r.content]),
      [[1, 'offline']],
    );
  });

  it('restores a revision by PATCHing its text, which is itself a new revision', async () => {
    const note = (await owner.post('/api/notes', { title: 'Draft', content: 'good words' })).body;
    await owner.patch(`/api/notes/${note.id}`, { content: 'lost the good words' });
    const [, first] = await revisionsOf(owner, note.id);
    const restored = (
      await owner.patch(`/api/notes/${note.id}`, { title: first!.title, content: first!.content })
    ).body;
    assert.equal(restored.content, 'good words');
    assert.deepEqual(
      (await revisionsOf(owner, note.id)).map((r) => [r.version, r.content]),
      [
        [3, 'good words'],
        [2, 'lost the good words'],
        [1, 'good words'],
      ],
    );
  });

  it('answers 404 like GET note to someone who cannot see the note, and for an unknown id', async () => {
    const note = (await owner.post('/api/notes', { content: 'private' })).body;
    const hidden = await stranger.client.get(`/api/notes/${note.id}`);
    assert.equal(hidden.status, 404);
    for (const response of [
      await stranger.client.get(`/api/notes/${note.id}/revisions`),
      await owner.get(`/api/notes/${randomUUID()}/revisions`),
    ]) {
      assert.equal(response.status, 404);
      assert.deepEqual(response.body, hidden.body);
    }
    assert.equal((await owner.get('/api/notes/not-a-uuid/revisions')).status, 404);
    assert.equal((await clientOf(server).get(`/api/notes/${note.id}/revisions`)).status, 401);
  });

  it('may be read with a read-only API key', async () => {
    const note = (await owner.post('/api/notes', { content: 'for the key' })).body;
    const key = (await owner.post('/api/settings/api-keys', { name: 'reader', scopes: ['notes:read'] })).body
      .key;
    const response = await clientOf(server).get(`/api/notes/${note.id}/revisions`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(response.status, 200);
    assert.equal(response.body[0].content, 'for the key');
  });

  it(`keeps the last ${REVISIONS_KEPT} revisions or those of ${REVISION_RETENTION_DAYS} days, whichever are more`, async () => {
    const note = (await owner.post('/api/notes', { content: 'edit 0' })).body;
    for (let i = 1; i < REVISIONS_KEPT + 10; i++) {
      clock.advance(1000);
      await owner.patch(`/api/notes/${note.id}`, { content: `edit ${i}` });
    }
    // All 60 are younger than 30 days: all kept.
    assert.equal((await revisionsOf(owner, note.id)).length, REVISIONS_KEPT + 10);
    await later(REVISION_RETENTION_DAYS * DAY);
    await owner.patch(`/api/notes/${note.id}`, { content: 'a month later' });
    const kept = await revisionsOf(owner, note.id);
    assert.equal(kept.length, REVISIONS_KEPT);
    assert.equal(kept[0]!.content, 'a month later');
    assert.equal(kept.at(-1)!.version, REVISIONS_KEPT + 11 - REVISIONS_KEPT + 1);
  });

  it('go with the note on every delete path: REST, sync, trash purge, user removal', async () => {
    const rest = (await owner.post('/api/notes', { content: 'rest' })).body.id;
    const synced = (await owner.post('/api/notes', { content: 'sync' })).body.id;
    const purged = (await owner.post('/api/notes', { content: 'purge', trashed: true })).body.id;
    const ids = [rest, synced, purged, removedUsersNote];
    const countRevisions = async () =>
      (
        await server.app.db
          .selectFrom('note_revisions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('note_id', 'in', ids)
          .executeTakeFirstOrThrow()
      ).n;
    assert.equal(await countRevisions(), 4);

    assert.equal((await owner.delete(`/api/notes/${rest}`)).status, 200);
    await pushOne(owner, { noteId: synced, operation: 'delete', timestamp: clock.now() });
    await later(31 * DAY);
    assert.equal(await server.app.services.notes.purgeExpiredTrash(), 1);
    assert.equal((await owner.delete(`/api/users/${removedUser.userId}`)).status, 200);
    assert.equal(await countRevisions(), 0);
  });
});

describe('revision pruning', sqliteOnly, () => {
  it('walks only the primary key: no row when nothing is old enough, no index by age (migration 0018), the rows beside the key (0020)', async () => {
    const prunes: string[] = [];
    const server = await startServer({
      onQuery: (sql) => {
        // The prepared statement of group commit's fast path (src/model/revisions.ts).
        if (sql.startsWith('DELETE FROM note_revisions')) prunes.push(sql);
      },
    });
    try {
      const owner = await setupOwner(server, { email: OWNER_EMAIL });
      const note = (await owner.post('/api/notes', { content: 'edit 0' })).body;
      for (let i = 1; i <= REVISIONS_KEPT; i++)
        await owner.patch(`/api/notes/${note.id}`, { content: `edit ${i}` });
      assert.equal(prunes.length, 1, 'the update to version 51 prunes');
      const sqlite = new SQLite(path.join(server.dataDir, 'notes.db'), { readonly: true });
      try {
        const plan = sqlite
          .prepare(`EXPLAIN QUERY PLAN ${prunes[0]}`)
          .all({ noteId: note.id, before: 0, offset: REVISIONS_KEPT - 1, unbounded: 0 }) as {
          detail: string;
        }[];
        const outer = plan[0]!.detail;
        assert.match(
          outer,
          /USING COVERING INDEX sqlite_autoindex_note_revisions_1 \(note_id=\? AND version<\?\)/,
          outer,
        );
        const indexes = sqlite
          .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'note_revisions'")
          .pluck()
          .all();
        assert.deepEqual(indexes, ['sqlite_autoindex_note_revisions_1'], "the primary key's index, no other");
        const table = sqlite
          .prepare("SELECT sql FROM sqlite_master WHERE name = 'note_revisions'")
          .pluck()
          .get();
        assert.doesNotMatch(
          String(table),
          /WITHOUT ROWID/,
          'whole revisions are rows of their own, not in the key',
        );
      } finally {
        sqlite.close();
      }
    } finally {
      await server.close();
    }
  });

  it('deletes exactly the revisions the rule lets go, and never one it keeps when clocks go back', async () => {
    const dataDir = tempDataDir();
    const database = await openDatabase(dataDir);
    const { db } = database;
    try {
      const user = await insertUser(db, {
        email: 'prune@example.com',
        display_name: 'Prune',
        password_hash: 'x',
        is_owner: 1,
        created_at: 0,
      });
      const noteId = randomUUID();
      await db.transaction().execute((trx) =>
        insertNote(trx, {
          ownerId: user.id,
          authorId: user.id,
          id: noteId,
          values: {},
          now: 0,
          stampedAt: 0,
        }),
      );
      const now = 1_000 * DAY;
      const before = now - REVISION_RETENTION_DAYS * DAY;
      await fc.assert(
        fc.asyncProperty(
          // Each earlier revision's age in days (0–60), oldest version first; sorted or not.
          fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 2 * REVISIONS_KEPT, size: 'max' }),
          fc.boolean(),
          // The prepared statement (outside a transaction) or its Kysely version (in one).
          fc.boolean(),
          async (ages, inOrder, viaKysely) => {
            const days = inOrder ? [...ages].sort((a, b) => b - a) : ages;
            const stamps = days.map((age) => now - age * DAY - 1);
            await db.deleteFrom('note_revisions').where('note_id', '=', noteId).execute();
            for (const [n, createdAt] of stamps.entries())
              await db
                .insertInto('note_revisions')
                .values({
                  note_id: noteId,
                  version: n + 1,
                  created_at: createdAt,
                  author_id: user.id,
                  title: '',
                  content: `${n}`,
                })
                .execute();
            const version = stamps.length + 1;
            const record = (on: Db) =>
              recordRevision(on, { id: noteId, version, title: '', content: 'now' }, user.id, now);
            await (viaKysely ? db.transaction().execute(record) : record(db));
            stamps.push(now);
            const kept = (
              await db
                .selectFrom('note_revisions')
                .select('version')
                .where('note_id', '=', noteId)
                .orderBy('version')
                .execute()
            ).map((row) => row.version);
            const all = stamps.map((_, n) => n + 1);
            // What the rule keeps: the newest REVISIONS_KEPT and every one made since `before`.
            const ruleKeeps = all.filter((v) => v > version - REVISIONS_KEPT || stamps[v - 1]! >= before);
            for (const v of ruleKeeps) assert.ok(kept.includes(v), `version ${v} kept`);
            // What goes: every revision below the first one made since `before`, beyond the newest kept.
            const firstYoung = all.find((v) => stamps[v - 1]! >= before)!;
            const goes = all.filter((v) => v < firstYoung && v <= version - REVISIONS_KEPT);
            assert.deepEqual(
              kept,
              all.filter((v) => !goes.includes(v)),
            );
            // With the clock never set back, that is all the rule lets go.
            if (inOrder) assert.deepEqual(kept, ruleKeeps);
          },
        ),
        { numRuns: 150 },
      );
    } finally {
      await database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('migration 0009_note_revisions', sqliteOnly, () => {
  it('gives every existing note its current text as its first revision', async () => {
    const first = await startServer();
    const owner = await setupOwner(first, { email: OWNER_EMAIL });
    const note = (await owner.post('/api/notes', { title: 'Old', content: 'before revisions' })).body;
    await owner.patch(`/api/notes/${note.id}`, { content: 'current text' });
    // The migration as the migrator runs it, on the table it creates gone again (with 0015's index
    // on it, which 0018 drops, and 0020's rebuild), not by forgetting it in kysely_migration:
    // later migrations would then stand before it.
    const db = first.app.db as unknown as Kysely<unknown>;
    await sql`DROP TABLE note_revisions`.execute(db);
    await addRevisions(db);
    await indexRevisionsByAge(db);
    await dropRevisionAgeIndex(db);
    await rebuildRevisionsWithRowids(db);
    await first.close({ keepData: true });

    const second = await startServer({ dataDir: first.dataDir });
    try {
      const again = clientOf(second);
      await again.post('/api/auth/login', { email: OWNER_EMAIL, password: OWNER_PASSWORD });
      const revisions = await revisionsOf(again, note.id);
      assert.deepEqual(
        revisions.map((r) => [r.version, r.title, r.content]),
        [[2, 'Old', 'current text']],
      );
    } finally {
      await second.close();
    }
  });
});
