import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { Db } from '../src/db/types.js';
import { addUser, clientOf, createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';
import { type ServiceUser, useServices } from './helpers/services.js';

type Side = 'owner' | 'collaborator' | 'stranger' | 'removedCollaborator' | 'deletedUser' | 'anonymous';
const SIDES: Side[] = [
  'owner',
  'collaborator',
  'stranger',
  'removedCollaborator',
  'deletedUser',
  'anonymous',
];

interface People {
  ownerId: number;
  collaboratorId: number;
  otherCollaboratorId: number;
  inviteeId: number;
}

/**
 * One row per note endpoint: a label, the request against a fresh shared note, and the status
 * each side gets, in the order of SIDES. A fresh note has the owner, `collaborator` and
 * `otherCollaborator` on it; the removed collaborator was on it and was removed; the deleted
 * user was removed by the owner (their session answers 401). Sync pull and deletions are
 * checked from the collaborator's side in 'Notes shared with a collaborator' below.
 */
interface MatrixRow {
  label: string;
  method: string;
  /** `attachmentId` is set when the row asks for an attachment on the fresh note. */
  path: (noteId: string, people: People, attachmentId?: string) => string;
  body?: (people: People) => unknown;
  /** The owner first uploads an image to the fresh note. */
  withAttachment?: boolean;
  /** Sends a multipart image upload instead of a JSON body. */
  upload?: boolean;
  expect: [
    owner: number,
    collaborator: number,
    stranger: number,
    removed: number,
    deleted: number,
    anonymous: number,
  ];
}

const MATRIX: MatrixRow[] = [
  {
    label: 'GET /api/notes/{id}',
    method: 'GET',
    path: (id) => `/api/notes/${id}`,
    expect: [200, 200, 404, 404, 401, 401],
  },
  {
    label: 'PATCH /api/notes/{id}',
    method: 'PATCH',
    path: (id) => `/api/notes/${id}`,
    body: () => ({ title: 'edited', pinned: true }),
    expect: [200, 200, 404, 404, 401, 401],
  },
  {
    label: 'DELETE /api/notes/{id}',
    method: 'DELETE',
    path: (id) => `/api/notes/${id}`,
    expect: [200, 403, 404, 404, 401, 401],
  },
  {
    label: 'GET /api/notes/{id}/collaborators',
    method: 'GET',
    path: (id) => `/api/notes/${id}/collaborators`,
    expect: [200, 200, 404, 404, 401, 401],
  },
  {
    label: 'POST /api/notes/{id}/collaborators with a user not yet on the note',
    method: 'POST',
    path: (id) => `/api/notes/${id}/collaborators`,
    body: (p) => ({ userId: p.inviteeId }),
    expect: [201, 403, 404, 404, 401, 401],
  },
  {
    label: 'DELETE /api/notes/{id}/collaborators?userId=self',
    method: 'DELETE',
    path: (id) => `/api/notes/${id}/collaborators?userId=self`,
    expect: [400, 200, 404, 404, 401, 401],
  },
  {
    label: 'DELETE /api/notes/{id}/collaborators?userId=<the collaborator>',
    method: 'DELETE',
    path: (id, p) => `/api/notes/${id}/collaborators?userId=${p.collaboratorId}`,
    expect: [200, 200, 404, 404, 401, 401],
  },
  {
    label: 'DELETE /api/notes/{id}/collaborators?userId=<another collaborator>',
    method: 'DELETE',
    path: (id, p) => `/api/notes/${id}/collaborators?userId=${p.otherCollaboratorId}`,
    expect: [200, 403, 404, 404, 401, 401],
  },
  {
    label: 'GET /api/notes/{id}/attachments',
    method: 'GET',
    path: (id) => `/api/notes/${id}/attachments`,
    expect: [200, 200, 404, 404, 401, 401],
  },
  {
    label: 'POST /api/notes/{id}/attachments',
    method: 'POST',
    path: (id) => `/api/notes/${id}/attachments`,
    upload: true,
    expect: [201, 201, 404, 404, 401, 401],
  },
  {
    label: 'GET /api/notes/{id}/attachments?attachmentId= (download)',
    method: 'GET',
    path: (id, _people, attachmentId) => `/api/notes/${id}/attachments?attachmentId=${attachmentId}`,
    withAttachment: true,
    expect: [200, 200, 404, 404, 401, 401],
  },
  {
    label: 'DELETE /api/notes/{id}/attachments?attachmentId=',
    method: 'DELETE',
    path: (id, _people, attachmentId) => `/api/notes/${id}/attachments?attachmentId=${attachmentId}`,
    withAttachment: true,
    expect: [200, 200, 404, 404, 401, 401],
  },
  {
    // The interface's error table (docs/interface.md#errors): "note not found or caller is not the owner" → 404, even for
    // a collaborator (it overrides D-ERR-2's 403 here).
    label: 'POST /api/notes/{id}/share',
    method: 'POST',
    path: (id) => `/api/notes/${id}/share`,
    expect: [201, 404, 404, 404, 401, 401],
  },
  {
    label: 'DELETE /api/notes/{id}/share',
    method: 'DELETE',
    path: (id) => `/api/notes/${id}/share`,
    expect: [204, 404, 404, 404, 401, 401],
  },
];

let png: Buffer | undefined;
async function imageForm(): Promise<FormData> {
  png ??= await sharp({ create: { width: 40, height: 30, channels: 3, background: '#c0ffee' } })
    .png()
    .toBuffer();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'pixel.png');
  return form;
}

async function tombstoneFor(db: Db, noteId: string, userId: number) {
  return db
    .selectFrom('note_tombstones')
    .selectAll()
    .where('note_id', '=', noteId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

describe('Note permission matrix (D-COLLAB-1, D-ERR-2)', () => {
  let server: TestServer;
  let owner: TestClient;
  let clients: Record<Side, TestClient>;
  let people: People;
  let removedId: number;

  async function freshNote(): Promise<string> {
    const created = await owner.post('/api/notes', { title: 'Shared', content: 'plans #trip' });
    const id: string = created.body.id;
    for (const userId of [people.collaboratorId, people.otherCollaboratorId, removedId]) {
      assert.equal((await owner.post(`/api/notes/${id}/collaborators`, { userId })).status, 201);
    }
    assert.equal((await owner.delete(`/api/notes/${id}/collaborators?userId=${removedId}`)).status, 200);
    return id;
  }

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
    const collaborator = await createUserClient(server, 'collaborator@example.test', 'a password', owner);
    const stranger = await createUserClient(server, 'stranger@example.test', 'a password', owner);
    const removed = await createUserClient(server, 'removed@example.test', 'a password', owner);
    const deleted = await createUserClient(server, 'deleted@example.test', 'a password', owner);
    removedId = removed.userId;
    people = {
      ownerId: (await owner.get('/api/auth/status')).body.user.id,
      collaboratorId: collaborator.userId,
      otherCollaboratorId: await addUser(owner, 'other@example.test'),
      inviteeId: await addUser(owner, 'invitee@example.test'),
    };
    // The deleted user was a collaborator once; their session outlives nothing.
    const note = (await owner.post('/api/notes', { title: 'before deletion' })).body.id;
    await owner.post(`/api/notes/${note}/collaborators`, { userId: deleted.userId });
    assert.equal((await owner.delete(`/api/users/${deleted.userId}`)).status, 200);
    clients = {
      owner,
      collaborator: collaborator.client,
      stranger: stranger.client,
      removedCollaborator: removed.client,
      deletedUser: deleted.client,
      anonymous: clientOf(server),
    };
  });
  after(() => server.close());

  for (const row of MATRIX) {
    describe(row.label, () => {
      SIDES.forEach((side, index) => {
        it(`answers ${row.expect[index]} to the ${side}`, async () => {
          const noteId = await freshNote();
          const attachmentId = row.withAttachment
            ? (await owner.request('POST', `/api/notes/${noteId}/attachments`, { body: await imageForm() }))
                .body.id
            : undefined;
          const response = await clients[side].request(row.method, row.path(noteId, people, attachmentId), {
            json: row.body?.(people),
            body: row.upload ? await imageForm() : undefined,
          });
          assert.equal(response.status, row.expect[index], `${side}: ${response.text}`);
          if (response.status === 403) assert.equal(response.body.code, 'forbidden');
          if (response.status === 404) assert.equal(response.body.code, 'note_not_found');
          if (response.status === 401) assert.equal(response.body.code, 'unauthenticated');
        });
      });
    });
  }

  it('changes nothing when a request is refused', async () => {
    const noteId = await freshNote();
    const original = (await owner.get(`/api/notes/${noteId}`)).body;
    for (const side of ['stranger', 'removedCollaborator', 'deletedUser', 'anonymous'] as const) {
      await clients[side].patch(`/api/notes/${noteId}`, { title: 'hijacked' });
      await clients[side].delete(`/api/notes/${noteId}`);
      await clients[side].post(`/api/notes/${noteId}/collaborators`, { userId: people.inviteeId });
      await clients[side].delete(`/api/notes/${noteId}/collaborators?userId=${people.collaboratorId}`);
    }
    await clients.collaborator.delete(`/api/notes/${noteId}`);
    await clients.collaborator.post(`/api/notes/${noteId}/collaborators`, { userId: people.inviteeId });
    await clients.collaborator.delete(
      `/api/notes/${noteId}/collaborators?userId=${people.otherCollaboratorId}`,
    );
    assert.deepEqual((await owner.get(`/api/notes/${noteId}`)).body, original);
    const list = (await owner.get(`/api/notes/${noteId}/collaborators`)).body;
    assert.deepEqual(
      list.map((c: { userId: number }) => c.userId),
      [people.collaboratorId, people.otherCollaboratorId],
    );
  });
});

describe('Notes shared with a collaborator, at the services (D-NOTE-5, D-NOTE-7, D-SYNC-3)', () => {
  const tier = useServices();
  let owner: ServiceUser;
  let collaborator: ServiceUser;
  let stranger: ServiceUser;

  before(async () => {
    owner = tier.owner;
    collaborator = await tier.addUser('friend@example.test');
    stranger = await tier.addUser('nobody@example.test');
  });

  async function sharedNote(): Promise<string> {
    const created = await tier.createNote(owner, {
      title: 'Lisbon trip',
      content: 'pack sunscreen #travel',
    });
    await tier.share(owner, created.id, collaborator.userId);
    return created.id;
  }

  /** Whether the note reaches `user` through each way of reading notes (the routes' services). */
  async function seenBy(user: ServiceUser, noteId: string) {
    const { services } = tier;
    const [list, note, search, tags, pull, deleted] = await Promise.all([
      services.notes.list(user.actor, {}),
      tier.noteOf(user, noteId),
      services.search.search(user.actor, { q: 'sunscreen' }),
      services.tags.list(user.actor),
      tier.pullAll(user),
      tier.deletedSince(user, 0),
    ]);
    return {
      list: list.some((n) => n.id === noteId),
      get: note === undefined ? 404 : 200,
      search: search.some((n) => n.id === noteId),
      tags: tags.some((t) => t.name === 'travel'),
      syncPull: pull.some((n) => n.id === noteId),
      syncDeleted: deleted.some((d) => d.id === noteId),
    };
  }

  /** Removes the note for good (the owner's DELETE /api/notes/{id}). */
  const removeNote = (noteId: string) => tier.services.notes.remove(owner.actor, noteId);

  it('shows a shared note to the collaborator in list, get, search, tags and sync pull, with the ownerId', async () => {
    const noteId = await sharedNote();
    assert.deepEqual(await seenBy(collaborator, noteId), {
      list: true,
      get: 200,
      search: true,
      tags: true,
      syncPull: true,
      syncDeleted: false,
    });
    const note = await tier.readNote(collaborator, noteId);
    assert.equal(note.ownerId, owner.userId);
    const byTag = await tier.services.notes.list(collaborator.actor, { tag: 'travel' });
    assert.deepEqual(
      byTag.map((n) => n.id),
      [noteId],
    );
    assert.deepEqual(await seenBy(stranger, noteId), {
      list: false,
      get: 404,
      search: false,
      tags: false,
      syncPull: false,
      syncDeleted: false,
    });
    await removeNote(noteId);
  });

  it('hides the note everywhere once the owner removes the collaborator, and lists it in their sync deletions', async () => {
    const noteId = await sharedNote();
    await tier.services.collaborators.remove(owner.actor, noteId, collaborator.userId);
    assert.deepEqual(await seenBy(collaborator, noteId), {
      list: false,
      get: 404,
      search: false,
      tags: false,
      syncPull: false,
      syncDeleted: true,
    });
    assert.ok(await tombstoneFor(tier.db, noteId, collaborator.userId));
    assert.equal(await tombstoneFor(tier.db, noteId, owner.userId), undefined);
    await removeNote(noteId);
  });

  it('hides the note once the collaborator leaves with userId=self, and leaves them a tombstone', async () => {
    const noteId = await sharedNote();
    await tier.services.collaborators.remove(collaborator.actor, noteId, 'self');
    assert.deepEqual(await seenBy(collaborator, noteId), {
      list: false,
      get: 404,
      search: false,
      tags: false,
      syncPull: false,
      syncDeleted: true,
    });
    assert.ok(await tombstoneFor(tier.db, noteId, collaborator.userId));
    assert.ok(await tier.noteOf(owner, noteId), 'the owner keeps the note');
    await removeNote(noteId);
  });

  it('changes neither version nor updatedAt of the note when sharing or unsharing it', async () => {
    const noteId = await sharedNote();
    const original = await tier.readNote(owner, noteId);
    await tier.services.collaborators.remove(owner.actor, noteId, collaborator.userId);
    await tier.share(owner, noteId, collaborator.userId);
    await tier.services.collaborators.remove(collaborator.actor, noteId, 'self');
    const current = await tier.readNote(owner, noteId);
    assert.equal(current.version, original.version);
    assert.equal(current.updatedAt, original.updatedAt);
    await removeNote(noteId);
  });

  it('clears the tombstone when the collaborator is added again', async () => {
    const noteId = await sharedNote();
    await tier.services.collaborators.remove(owner.actor, noteId, collaborator.userId);
    await tier.share(owner, noteId, collaborator.userId);
    assert.equal(await tombstoneFor(tier.db, noteId, collaborator.userId), undefined);
    assert.ok(await tier.noteOf(collaborator, noteId));
    await removeNote(noteId);
  });

  it('lets a collaborator change every NoteInput field, flags included, for everyone (D-COLLAB-1)', async () => {
    const noteId = await sharedNote();
    const edit = {
      title: 'Porto trip',
      content: 'pack sunscreen and a hat #travel',
      color: 'mint',
      pinned: true,
      archived: true,
      trashed: false,
      checklistMode: true,
      sortOrder: 7,
    } as const;
    const patched = await tier.services.notes.update(collaborator.actor, noteId, edit);
    assert.equal(patched.version, 2);
    const seen: Record<string, unknown> = { ...(await tier.readNote(owner, noteId)) };
    for (const [field, value] of Object.entries(edit)) assert.deepEqual(seen[field], value, field);
    const archived = await tier.services.notes.list(collaborator.actor, { filter: 'archived' });
    assert.ok(archived.some((n) => n.id === noteId));
    await removeNote(noteId);
  });

  it('leaves the collaborator a tombstone when the owner deletes the note', async () => {
    const noteId = await sharedNote();
    await removeNote(noteId);
    assert.equal(await tier.noteOf(collaborator, noteId), undefined);
    assert.ok(await tombstoneFor(tier.db, noteId, collaborator.userId));
    assert.ok(await tombstoneFor(tier.db, noteId, owner.userId));
  });
});

describe('POST /api/notes/:id/collaborators (D-COLLAB-2)', () => {
  let server: TestServer;
  let owner: TestClient;
  let ownerId: number;
  let friendId: number;
  let noteId: string;

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server, { email: 'owner@example.test', displayName: 'Olga Owner' });
    ownerId = (await owner.get('/api/auth/status')).body.user.id;
    friendId = await addUser(owner, 'friend@example.test');
    noteId = (await owner.post('/api/notes', { title: 'Groceries' })).body.id;
  });
  after(() => server.close());

  it('answers 201 with the full list of Collaborators', async () => {
    const secondId = await addUser(owner, 'second@example.test');
    const first = await owner.post(`/api/notes/${noteId}/collaborators`, { userId: friendId });
    assert.equal(first.status, 201);
    const second = await owner.post(`/api/notes/${noteId}/collaborators`, { userId: secondId });
    assert.equal(second.status, 201);
    assert.deepEqual(
      second.body.map((c: { userId: number }) => c.userId),
      [friendId, secondId],
    );
    const [entry] = second.body;
    assert.deepEqual(Object.keys(entry).sort(), ['addedAt', 'displayName', 'email', 'userId']);
    assert.equal(entry.email, 'friend@example.test');
    assert.equal(entry.displayName, 'friend');
    assert.match(entry.addedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual((await owner.get(`/api/notes/${noteId}/collaborators`)).body, second.body);
  });

  it('answers 409 already_collaborator for a user already on the note', async () => {
    const again = await owner.post(`/api/notes/${noteId}/collaborators`, { userId: friendId });
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'already_collaborator');
  });

  for (const [label, body] of [
    ['userId is missing', {}],
    ['userId is a string', { userId: String(2) }],
    ['userId is zero', { userId: 0 }],
    ['userId is negative', { userId: -3 }],
    ['userId is a fraction', { userId: 1.5 }],
    ['userId is null', { userId: null }],
  ] as const) {
    it(`answers 400 when ${label}`, async () => {
      const response = await owner.post(`/api/notes/${noteId}/collaborators`, body);
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'validation_failed');
    });
  }

  it('answers 400 when the owner is given as collaborator', async () => {
    const response = await owner.post(`/api/notes/${noteId}/collaborators`, { userId: ownerId });
    assert.equal(response.status, 400);
    assert.equal(response.body.code, 'owner_not_collaborator');
  });

  it('answers 404 user_not_found for a user that does not exist', async () => {
    const response = await owner.post(`/api/notes/${noteId}/collaborators`, { userId: 999_999 });
    assert.equal(response.status, 404);
    assert.equal(response.body.code, 'user_not_found');
  });

  it('answers 404 note_not_found for an unknown note and for a malformed id (D-ERR-2)', async () => {
    for (const id of ['0b7c6a52-8f2e-4f0e-9a57-5f7f7c1d2e3a', 'not-a-uuid']) {
      const unknown = await owner.post(`/api/notes/${id}/collaborators`, { userId: friendId });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'note_not_found');
    }
  });
});

describe('DELETE /api/notes/:id/collaborators (D-COLLAB-2)', () => {
  let server: TestServer;
  let owner: TestClient;
  let ownerId: number;
  let collaborator: { client: TestClient; userId: number };
  let otherId: number;
  let outsiderId: number;
  let noteId: string;

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
    ownerId = (await owner.get('/api/auth/status')).body.user.id;
    collaborator = await createUserClient(server, 'collab@example.test', 'a password', owner);
    otherId = await addUser(owner, 'other@example.test');
    outsiderId = await addUser(owner, 'outsider@example.test');
    noteId = (await owner.post('/api/notes', { title: 'Shared' })).body.id;
    await owner.post(`/api/notes/${noteId}/collaborators`, { userId: collaborator.userId });
    await owner.post(`/api/notes/${noteId}/collaborators`, { userId: otherId });
  });
  after(() => server.close());

  for (const query of [
    '',
    '?userId=',
    '?userId=abc',
    '?userId=0',
    '?userId=-1',
    '?userId=1.5',
    '?userId=SELF',
  ]) {
    it(`answers 400 for ${query || 'no userId'}`, async () => {
      const response = await owner.delete(`/api/notes/${noteId}/collaborators${query}`);
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'validation_failed');
    });
  }

  it('answers 400 when the owner uses self, or its own id', async () => {
    for (const target of ['self', String(ownerId)]) {
      const response = await owner.delete(`/api/notes/${noteId}/collaborators?userId=${target}`);
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'owner_cannot_leave');
    }
  });

  it('answers 404 collaborator_not_found for a user who is not a collaborator', async () => {
    for (const target of [outsiderId, 999_999]) {
      const response = await owner.delete(`/api/notes/${noteId}/collaborators?userId=${target}`);
      assert.equal(response.status, 404);
      assert.equal(response.body.code, 'collaborator_not_found');
    }
  });

  it('answers 403 when a collaborator tries to remove someone else, the owner included', async () => {
    for (const target of [otherId, ownerId, outsiderId]) {
      const response = await collaborator.client.delete(
        `/api/notes/${noteId}/collaborators?userId=${target}`,
      );
      assert.equal(response.status, 403);
      assert.equal(response.body.code, 'forbidden');
    }
  });

  it('lets a collaborator leave by naming their own id', async () => {
    const response = await collaborator.client.delete(
      `/api/notes/${noteId}/collaborators?userId=${collaborator.userId}`,
    );
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { success: true });
    const list = (await owner.get(`/api/notes/${noteId}/collaborators`)).body;
    assert.deepEqual(
      list.map((c: { userId: number }) => c.userId),
      [otherId],
    );
    const again = await collaborator.client.delete(`/api/notes/${noteId}/collaborators?userId=self`);
    assert.equal(again.status, 404);
    assert.equal(again.body.code, 'note_not_found');
  });
});
