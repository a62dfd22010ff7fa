import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRandom, generateCorpus, MAX_CONTENT, MIN_CONTENT } from '../bench/corpus.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('benchmark corpus', () => {
  it('gives the same notes, ids included, for the same seed', () => {
    assert.deepEqual([...generateCorpus(7, 200)], [...generateCorpus(7, 200)]);
  });

  it('gives other notes for another seed', () => {
    const [a] = generateCorpus(7, 1);
    const [b] = generateCorpus(8, 1);
    assert.notDeepEqual(a, b);
  });

  it('does not depend on how many notes are asked for (a prefix stays a prefix)', () => {
    assert.deepEqual([...generateCorpus(7, 50)], [...generateCorpus(7, 200)].slice(0, 50));
  });

  it('makes notes the API accepts: unique v4 uuids, 50–2,000 characters of content', () => {
    const notes = [...generateCorpus(11, 2_000)];
    assert.equal(new Set(notes.map((n) => n.id)).size, notes.length);
    for (const note of notes) {
      assert.match(note.id, UUID);
      assert.ok(note.content.length >= MIN_CONTENT && note.content.length <= MAX_CONTENT, note.content);
      assert.ok(!(note.archived && note.trashed));
    }
  });

  it('has the mix of the issue: about 20% checklists, 10% archived, 5% trashed, 5% with an image', () => {
    const notes = [...generateCorpus(11, 2_000)];
    const share = (pick: (n: (typeof notes)[number]) => boolean) => notes.filter(pick).length / notes.length;
    assert.ok(Math.abs(share((n) => n.checklistMode) - 0.2) < 0.03);
    assert.ok(Math.abs(share((n) => n.archived) - 0.1) < 0.025);
    assert.ok(Math.abs(share((n) => n.trashed) - 0.05) < 0.02);
    assert.ok(Math.abs(share((n) => n.withImage) - 0.05) < 0.02);
    assert.ok(share((n) => /(^|\s)#\p{L}/u.test(n.content)) > 0.5, 'most notes carry hashtags');
    assert.ok(share((n) => /\p{Script=Han}|\p{Script=Cyrillic}/u.test(n.content)) > 0.05, 'multilingual');
  });

  it('createRandom is a deterministic generator of numbers in [0, 1)', () => {
    const a = createRandom(1);
    const b = createRandom(1);
    for (let i = 0; i < 1_000; i++) {
      const x = a();
      assert.equal(x, b());
      assert.ok(x >= 0 && x < 1);
    }
  });
});
