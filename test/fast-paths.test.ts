/**
 * Each SQLite fast path (src/db/fastPath.ts) answers exactly what the Kysely version of its
 * query answers, and never runs where it must not: in a transaction, or beside one that is open.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import sharp from 'sharp';
import { transaction } from '../src/db/transaction.js';
import type { Db } from '../src/db/types.js';
import { findKeyUser, findKeyUserWithKysely, keyUserStatement } from '../src/features/apiKeys/store.js';
import {
  findSessionUser,
  findSessionUserWithKysely,
  sessionUserStatement,
} from '../src/features/auth/store.js';
import { attachmentsByNote } from '../src/model/attachments.js';
import { findNoteWithRoleFast, findNoteWithRoleWithKysely, noteRelationsFast } from '../src/model/notes.js';
import { tagsByNote } from '../src/model/tags.js';
import { clientOf, createUserClient, type TestClient } from './helpers/client.js';
import { sqliteOnly } from './helpers/postgres.js';
import { useOwner, useServer } from './helpers/server.js';

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

async function attach(client: TestClient, noteId: string, name: string, color: string) {
  const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: color } })
    .png()
    .toBuffer();
  const form = new FormData();
  form.append('file', new Blob([png], { type: 'image/png' }), name);
  const response = await client.request('POST', `/api/notes/${noteId}/attachments`, { body: form });
  assert.equal(response.status, 201, response.text);
}

describe('SQLite fast paths', sqliteOnly, () => {
  const server = useServer();
  const owner = useOwner(server);

  it('findSessionUser answers as its Kysely version: valid, expired, unknown sessions', async () => {
    const { db } = server.app;
    const token = owner.cookies.get('session')!;
    const hash = sha256Hex(token);
    const session = await db
      .selectFrom('sessions')
      .selectAll()
      .where('token_hash', '=', hash)
      .executeTakeFirstOrThrow();
    const cases: [string, number][] = [
      [hash, session.created_at],
      [hash, session.expires_at - 1],
      [hash, session.expires_at],
      [sha256Hex('not a session'), session.created_at],
    ];
    for (const [tokenHash, now] of cases) {
      const fast = sessionUserStatement.get(db, tokenHash, now);
      assert.ok(fast, 'the server database has the fast path');
      assert.deepEqual(fast.row, await findSessionUserWithKysely(db, tokenHash, now));
    }
    assert.equal((await findSessionUser(db, hash, session.created_at))?.token_hash, hash);
  });

  it('findKeyUser answers as its Kysely version: a key, a revoked key, an unknown key', async () => {
    const { db } = server.app;
    const created = (
      await owner.post('/api/settings/api-keys', { name: 'fast', scopes: ['notes:read', 'notes:write'] })
    ).body;
    const revoked = (await owner.post('/api/settings/api-keys', { name: 'gone', scopes: ['notes:read'] }))
      .body;
    assert.equal((await owner.delete(`/api/settings/api-keys/${revoked.id}`)).status, 200);
    // A use sets last_used_at, so both columns' shapes (null and a number) are compared.
    const used = await clientOf(server).get('/api/notes', {
      headers: { authorization: `Bearer ${created.key}` },
    });
    assert.equal(used.status, 200);
    const fresh = (await owner.post('/api/settings/api-keys', { name: 'unused', scopes: ['notes:read'] }))
      .body;
    for (const key of [created.key, fresh.key, revoked.key, 'ks_not_a_key']) {
      const fast = keyUserStatement.get(db, sha256Hex(key));
      assert.ok(fast, 'the server database has the fast path');
      assert.deepEqual(fast.row, await findKeyUserWithKysely(db, sha256Hex(key)));
    }
    assert.equal((await findKeyUser(db, sha256Hex(created.key)))?.id, created.id);
    assert.equal(await findKeyUser(db, sha256Hex(revoked.key)), undefined);
  });

  it('findNoteWithRole and noteRelationsFast answer as their Kysely versions for owners, collaborators and strangers', async () => {
    const { db } = server.app;
    const friend = await createUserClient(server, 'friend@example.com');
    const stranger = await createUserClient(server, 'stranger@example.com');
    const ownerId = (await owner.get('/api/users/me')).body.id;
    const tagged = (await owner.post('/api/notes', { title: 'Plans #work #home', content: '#zoo #äpfel' }))
      .body;
    await attach(owner, tagged.id, 'b.png', '#112233');
    await attach(owner, tagged.id, 'a.png', '#445566');
    const shared = (await owner.post('/api/notes', { title: 'Shared #work' })).body;
    assert.equal(
      (await owner.post(`/api/notes/${shared.id}/collaborators`, { userId: friend.userId })).status,
      201,
    );
    await attach(friend.client, shared.id, 'c.png', '#778899');
    const trashed = (await owner.post('/api/notes', { title: 'Gone', trashed: true })).body;
    const friends = (await friend.client.post('/api/notes', { title: 'Mine #secret' })).body;
    const noteIds = [tagged.id, shared.id, trashed.id, friends.id, randomUUID()];
    for (const userId of [ownerId, friend.userId, stranger.userId]) {
      for (const noteId of noteIds) {
        const fast = findNoteWithRoleFast(db, noteId, userId);
        assert.ok(fast, 'the server database has the fast path');
        assert.deepEqual(
          fast.found,
          await findNoteWithRoleWithKysely(db, noteId, userId),
          `${userId} ${noteId}`,
        );
      }
    }
    for (const noteId of noteIds) {
      const relations = noteRelationsFast(db, noteId);
      assert.ok(relations, 'the server database has the fast path');
      const [tags, attachments] = await Promise.all([
        tagsByNote(db, [noteId]),
        attachmentsByNote(db, [noteId]),
      ]);
      assert.deepEqual(relations, {
        tags: tags.get(noteId) ?? [],
        attachments: attachments.get(noteId) ?? [],
      });
    }
    assert.equal(findNoteWithRoleFast(db, tagged.id, ownerId)?.found?.role, 'owner');
    assert.equal(findNoteWithRoleFast(db, tagged.id, stranger.userId)?.found?.role, undefined);
    const relations = noteRelationsFast(db, tagged.id);
    assert.deepEqual(relations?.tags, ['home', 'work', 'zoo', 'äpfel']);
    assert.equal(relations?.attachments.length, 2);
  });

  it('answers a create with the tags and attachments a read of the database gives, in the same order, without reading them', async () => {
    // Letters from both ends of the code point range: UTF-16 order and SQLite's byte order
    // disagree on an astral letter against one from U+E000 to U+FFFF.
    const letter = fc.constantFrom('a', 'z', 'é', 'ß', '日', 'ｚ', '\u{1D400}', '\u{20000}', 'ω');
    const tagName = fc.array(letter, { minLength: 1, maxLength: 4 }).map((letters) => letters.join(''));
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(tagName, { maxLength: 6 }), async (names) => {
        const created = await owner.post('/api/notes', {
          title: 'tags',
          content: names.map((name) => `#${name}`).join(' '),
        });
        assert.equal(created.status, 201, created.text);
        const id = created.body.id as string;
        const read = (await tagsByNote(server.app.db, [id])).get(id) ?? [];
        assert.deepEqual(created.body.tags, read);
        assert.deepEqual(created.body.attachments, []);
      }),
      { numRuns: 40 },
    );
  });

  it('answers an edit of the text with the tags a read of the database gives, without reading them', async () => {
    const letter = fc.constantFrom('a', 'z', 'é', 'ß', '日', 'ｚ', '\u{1D400}', '\u{20000}', 'ω');
    const tagName = fc.array(letter, { minLength: 1, maxLength: 4 }).map((letters) => letters.join(''));
    const note = (await owner.post('/api/notes', { title: 'edited tags', content: '#start' })).body;
    await attach(owner, note.id, 'kept.png', '#00ff00');
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(tagName, { maxLength: 6 }),
        fc.constantFrom('title', 'content', 'color'),
        async (names, field) => {
          const hashtags = names.map((name) => `#${name}`).join(' ');
          const edit =
            field === 'color'
              ? { color: names.length % 2 ? 'mint' : 'sand' }
              : { [field]: `edit ${hashtags}` };
          const edited = await owner.patch(`/api/notes/${note.id}`, edit);
          assert.equal(edited.status, 200, edited.text);
          const read = (await tagsByNote(server.app.db, [note.id])).get(note.id) ?? [];
          assert.deepEqual(edited.body.tags, read);
          const attachments = (await attachmentsByNote(server.app.db, [note.id])).get(note.id) ?? [];
          assert.deepEqual(
            edited.body.attachments.map((attachment: { id: string }) => attachment.id),
            attachments.map((attachment) => attachment.id),
          );
          assert.equal(attachments.length, 1);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('is not taken in a transaction, nor beside one open on the connection', async () => {
    const { db } = server.app;
    const hash = sha256Hex(owner.cookies.get('session')!);
    assert.ok(sessionUserStatement.get(db, hash, 0));
    await db.transaction().execute(async (trx) => {
      assert.equal(sessionUserStatement.get(trx, hash, 0), undefined);
      // Another request's read while this transaction is open must not see its writes.
      assert.equal(sessionUserStatement.get(db, hash, 0), undefined);
    });
    assert.ok(sessionUserStatement.get(db, hash, 0));
  });

  it("is taken in a write transaction (group commit) for the transaction's own reads, which see its writes", async () => {
    const { db } = server.app;
    const note = (await owner.post('/api/notes', { title: 'before' })).body;
    const ownerId = (await owner.get('/api/auth/status')).body.user.id;
    const hash = sha256Hex(owner.cookies.get('session')!);
    let kept: Db | undefined;
    await transaction(
      db,
      async (trx) => {
        kept = trx;
        await trx.updateTable('notes').set({ title: 'inside' }).where('id', '=', note.id).execute();
        const fast = findNoteWithRoleFast(trx, note.id, ownerId);
        assert.ok(fast, 'the write transaction has the fast path');
        assert.equal(fast.found?.note.title, 'inside');
        assert.deepEqual(fast.found, await findNoteWithRoleWithKysely(trx, note.id, ownerId));
        // Beside the transaction, still none.
        assert.equal(sessionUserStatement.get(db, hash, 0), undefined);
        throw new Error('roll back');
      },
      { group: true },
    ).catch((error: Error) => assert.equal(error.message, 'roll back'));
    assert.equal(findNoteWithRoleFast(kept!, note.id, ownerId), undefined, 'none once it has ended');
    assert.equal(findNoteWithRoleFast(db, note.id, ownerId)?.found?.note.title, 'before');
  });
});
