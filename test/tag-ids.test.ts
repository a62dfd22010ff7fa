import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

/** The `{ id, name }` pairs the user sees, from GET /api/tags. */
async function tagIds(client: TestClient): Promise<Record<string, number>> {
  const response = await client.get('/api/tags');
  assert.equal(response.status, 200);
  return Object.fromEntries(response.body.map((t: { id: number; name: string }) => [t.name, t.id]));
}

/**
 * A server with the owner and two users, alice (id 2) then bob (id 3), created in the same
 * order on every server so that bob's user id is the same everywhere.
 */
async function serverWithUsers(): Promise<{ server: TestServer; alice: TestClient; bob: TestClient }> {
  const server = await startServer();
  const owner = await setupOwner(server);
  const alice = await createUserClient(server, 'alice@example.com', undefined, owner);
  const bob = await createUserClient(server, 'bob@example.com', undefined, owner);
  assert.deepEqual([alice.userId, bob.userId], [2, 3]);
  return { server, alice: alice.client, bob: bob.client };
}

describe('tag ids (D-TAG-2) reveal nothing about other users', () => {
  it('bob’s id for a tag is the same whether or not alice used the name, or many others, first', async () => {
    const quiet = await serverWithUsers();
    const busy = await serverWithUsers();
    try {
      // On the busy server alice uses the name first, and many other names besides.
      await busy.alice.post('/api/notes', { content: '#secretplan #merger #layoffs #a1 #a2 #a3' });
      await busy.bob.post('/api/notes', { content: '#secretplan #groceries' });
      await quiet.bob.post('/api/notes', { content: '#groceries #secretplan' });

      const busyIds = await tagIds(busy.bob);
      assert.deepEqual(busyIds, await tagIds(quiet.bob));
      const aliceIds = await tagIds(busy.alice);
      assert.notEqual(aliceIds.secretplan, busyIds.secretplan, 'ids are per user');
      for (const id of [...Object.values(busyIds), ...Object.values(aliceIds)]) {
        assert.ok(Number.isSafeInteger(id) && id >= 0, String(id));
      }
    } finally {
      await Promise.all([quiet.server.close(), busy.server.close()]);
    }
  });

  it('stays the same while the tag exists and when it comes back', async () => {
    const { server, bob } = await serverWithUsers();
    try {
      const first = (await bob.post('/api/notes', { content: '#errands' })).body;
      const ids = await tagIds(bob);
      const second = (await bob.post('/api/notes', { content: '#errands again' })).body;
      await bob.patch(`/api/notes/${first.id}`, { content: '#errands, edited' });
      assert.deepEqual(await tagIds(bob), ids);
      await bob.delete(`/api/notes/${first.id}`);
      await bob.delete(`/api/notes/${second.id}`);
      assert.deepEqual(await tagIds(bob), {});
      await bob.post('/api/notes', { content: '#errands' });
      assert.deepEqual(await tagIds(bob), ids);
    } finally {
      await server.close();
    }
  });
});
