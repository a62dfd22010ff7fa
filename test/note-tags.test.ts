import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addNoteTags, tagsByNote } from '../src/model/tags.js';
import { MAX_TAGS_PER_NOTE } from '../src/shared/hashtags.js';
import { useOwner, useServer } from './helpers/server.js';

/** replaceNoteTags skips the writes when the hashtags did not change; these pin both sides. */
describe('PATCH /api/notes/{id}: tags follow the text (D-TAG-2)', () => {
  const server = useServer();
  const owner = useOwner(server);

  const tagNames = async () => (await owner.get('/api/tags')).body.map((t: { name: string }) => t.name);

  it('replaces a hashtag swapped for another one (same number of tags)', async () => {
    const note = (await owner.post('/api/notes', { content: '#alpha #shared' })).body;
    const patched = await owner.patch(`/api/notes/${note.id}`, { content: '#omega #shared' });
    assert.deepEqual(patched.body.tags, ['omega', 'shared']);
    assert.deepEqual((await owner.get(`/api/notes/${note.id}`)).body.tags, ['omega', 'shared']);
    assert.deepEqual(await tagNames(), ['omega', 'shared']);
  });

  it('keeps the tags, and their ids, when an edit leaves the hashtags as they were', async () => {
    const note = (await owner.post('/api/notes', { title: 'first', content: 'text #keep' })).body;
    const before = (await owner.get('/api/tags')).body;
    const patched = await owner.patch(`/api/notes/${note.id}`, {
      title: 'second',
      content: 'other text #keep',
    });
    assert.deepEqual(patched.body.tags, ['keep']);
    assert.deepEqual((await owner.get('/api/tags')).body, before);
  });

  it("follows a title edit's hashtags, in and out, with the content as it was", async () => {
    const note = (await owner.post('/api/notes', { title: 'Trip #travel', content: 'plain text #keep' }))
      .body;
    const retitled = async (title: string) => {
      assert.equal((await owner.patch(`/api/notes/${note.id}`, { title })).status, 200);
      // The tags stored (the answer's own are worked out from its text); earlier tests' stay.
      return (await tagNames()).filter((name: string) => ['travel', 'holiday', 'keep'].includes(name));
    };
    assert.deepEqual(await retitled('Trip'), ['keep'], 'a hashtag taken out of the title');
    assert.deepEqual(await retitled('Trip again'), ['keep'], 'no hashtag in either title');
    assert.deepEqual(await retitled('Trip #holiday'), ['holiday', 'keep'], 'a hashtag put into the title');
  });

  it(`makes tags of the first ${MAX_TAGS_PER_NOTE} of 32,767 distinct hashtags, never a 500`, async () => {
    // 32,767 names bound one variable each were past SQLite's limit of 32,766.
    const content = Array.from({ length: 32_767 }, (_, n) => `#h${n}`).join(' ');
    const created = await owner.post('/api/notes', { content });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.tags.length, MAX_TAGS_PER_NOTE);
    const pushed = await owner.post('/api/sync', {
      changes: [{ noteId: crypto.randomUUID(), operation: 'create', timestamp: 1, data: { content } }],
    });
    assert.equal(pushed.status, 200, pushed.text);
  });

  it('tags a note with any number of names in one statement (the store, below the cap)', async () => {
    const note = (await owner.post('/api/notes', { content: 'no tags' })).body;
    const names = Array.from({ length: 40_000 }, (_, n) => `name${n}`).sort();
    await addNoteTags(server.app.db, note.id, names);
    assert.deepEqual((await tagsByNote(server.app.db, [note.id])).get(note.id), names);
  });
});
