import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { useOwner, useServer } from './helpers/server.js';

/**
 * Writes that read, decide and write (versions, revisions, merges) run one at a time on either
 * engine: SQLite has one writer, PostgreSQL one advisory write lock per transaction
 * (docs/decisions/0015-postgresql.md). Without it, concurrent edits of one note read the same
 * version and collide on its next revision.
 */
describe('concurrent writes to one note', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('each get their own version and revision, none lost, whatever their interleaving', async () => {
    const note = (await owner.post('/api/notes', { title: 'v1' })).body;
    const edits = Array.from({ length: 12 }, (_, i) => `edit ${i}`);
    const answers = await Promise.all(edits.map((title) => owner.patch(`/api/notes/${note.id}`, { title })));
    assert.deepEqual(
      answers.map((a) => a.status),
      edits.map(() => 200),
      answers.map((a) => a.text).join('\n'),
    );
    assert.deepEqual(
      answers.map((a) => a.body.version).sort((a, b) => a - b),
      edits.map((_, i) => i + 2),
    );
    const revisions = (await owner.get(`/api/notes/${note.id}/revisions`)).body;
    assert.equal(revisions.length, edits.length + 1);
  });

  it('and sync pushes of the same new note from two devices make one note', async () => {
    const noteId = randomUUID();
    const push = (timestamp: number) =>
      owner.post('/api/sync', {
        changes: [{ noteId, operation: 'create', timestamp, data: { title: `t${timestamp}` } }],
      });
    const answers = await Promise.all([1, 2, 3, 4].map(push));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200],
      answers.map((a) => a.text).join('\n'),
    );
    assert.equal((await owner.get(`/api/notes/${noteId}`)).status, 200);
  });
});
