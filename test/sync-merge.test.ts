import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyOrder,
  BatchFields,
  conflictCopyId,
  conflictCopyText,
  type MergeInput,
  mergeChange,
} from '../src/features/sync/merge.js';
import { type FieldHistory, NOTE_FIELD_NAMES, type NoteFields } from '../src/model/noteFields.js';
import { mergeLines } from '../src/shared/textMerge.js';

const NOTE = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';

const stored: NoteFields = {
  title: 'stored title',
  content: 'stored content',
  color: 'sand',
  pinned: true,
  archived: false,
  trashed: false,
  checklistMode: true,
  sortOrder: 7,
};

function history(
  stampedAt: Partial<Record<string, number>> = {},
  version: Partial<Record<string, number>> = {},
) {
  const h = { stampedAt: {}, version: {} } as FieldHistory;
  for (const f of NOTE_FIELD_NAMES) {
    h.stampedAt[f] = stampedAt[f] ?? 100;
    h.version[f] = version[f] ?? 1;
  }
  return h;
}

function merge(overrides: Partial<MergeInput>) {
  return mergeChange({
    index: 0,
    noteId: NOTE,
    timestamp: 200,
    data: {},
    stored,
    history: history(),
    batch: new BatchFields([]),
    ...overrides,
  });
}

describe('applyOrder (D-SYNC-4)', () => {
  it('sorts by timestamp and keeps array order for ties', () => {
    assert.deepEqual(
      applyOrder([{ timestamp: 5 }, { timestamp: 1 }, { timestamp: 5 }, { timestamp: 0 }]),
      [3, 1, 0, 2],
    );
  });
});

describe('mergeChange (D-SYNC-5, D-SYNC-8)', () => {
  it('takes a field whose stored stamp is not newer than the change', () => {
    const same = merge({ timestamp: 100, data: { color: 'mint' } });
    assert.deepEqual(same.accepted, { color: 'mint' });
    assert.equal(same.stale, false);
  });

  it('skips a field stamped later and calls the change stale when every field is', () => {
    const decision = merge({ timestamp: 50, data: { color: 'mint', pinned: true } });
    assert.deepEqual(decision.accepted, {});
    assert.equal(decision.stale, true);
  });

  it('is not stale when at least one field wins', () => {
    const decision = merge({
      timestamp: 150,
      history: history({ color: 300 }),
      data: { color: 'mint', pinned: true },
    });
    assert.deepEqual(decision.accepted, { pinned: true });
    assert.equal(decision.stale, false);
  });

  it('returns a stale title or content as a loser stamped with the change', () => {
    const decision = merge({ timestamp: 50, data: { title: 'mine', content: 'my text' } });
    assert.deepEqual(decision.losers, [
      { field: 'title', text: 'mine', stampedAt: 50 },
      { field: 'content', text: 'my text', stampedAt: 50 },
    ]);
  });

  it('keeps no loser for equal texts, empty texts or non-text fields', () => {
    assert.deepEqual(merge({ timestamp: 50, data: { title: 'stored title' } }).losers, []);
    assert.deepEqual(merge({ timestamp: 50, data: { content: '' } }).losers, []);
    assert.deepEqual(merge({ timestamp: 50, data: { color: 'coral' } }).losers, []);
  });

  it('with baseVersion, returns the stored text changed after it as the loser when the change wins', () => {
    const decision = merge({
      timestamp: 200,
      baseVersion: 2,
      history: history({ content: 150 }, { content: 3 }),
      data: { content: 'mine' },
    });
    assert.deepEqual(decision.accepted, { content: 'mine' });
    assert.deepEqual(decision.losers, [{ field: 'content', text: 'stored content', stampedAt: 150 }]);
  });

  it('with baseVersion, keeps nothing when the stored text is not newer than it', () => {
    const decision = merge({
      baseVersion: 3,
      history: history({}, { content: 3 }),
      data: { content: 'mine' },
    });
    assert.deepEqual(decision.losers, []);
  });

  it("never treats the batch's own values as someone else's", () => {
    const batch = new BatchFields([
      { noteId: NOTE, timestamp: 150, data: { content: 'earlier' } },
      { noteId: NOTE, timestamp: 200, data: { content: 'mine' } },
    ]);
    const wins = merge({
      index: 1,
      baseVersion: 1,
      stored: { ...stored, content: 'earlier' },
      history: history({ content: 150 }, { content: 2 }),
      data: { content: 'mine' },
      batch,
    });
    assert.deepEqual(wins.losers, []);
    const loses = merge({
      index: 0,
      timestamp: 150,
      stored: { ...stored, content: 'mine' },
      history: history({ content: 200 }),
      data: { content: 'earlier' },
      batch,
    });
    assert.deepEqual(loses.losers, []);
  });

  it("counts a value stored at the batch's timestamp by another device as someone else's", () => {
    const batch = new BatchFields([{ noteId: NOTE, timestamp: 200, data: { title: 'mine' } }]);
    const decision = merge({
      baseVersion: 1,
      history: history({ title: 200 }, { title: 2 }),
      data: { title: 'mine' },
      batch,
    });
    assert.deepEqual(decision.losers, [{ field: 'title', text: 'stored title', stampedAt: 200 }]);
  });

  it('lets the later change in array order win a tie within the batch, so a repeat changes nothing', () => {
    const batch = new BatchFields([
      { noteId: NOTE, timestamp: 200, data: { color: 'sage' } },
      { noteId: NOTE, timestamp: 200, data: { color: 'fog' } },
    ]);
    assert.deepEqual(merge({ index: 0, data: { color: 'sage' }, batch }).accepted, {});
    assert.deepEqual(merge({ index: 1, data: { color: 'fog' }, batch }).accepted, { color: 'fog' });
  });
});

describe('mergeChange: three-way merge of content (D-SYNC-9)', () => {
  const base = '- [ ] milk\n- [ ] bread\n- [ ] eggs';
  const ticked = (item: string) => base.replace(`[ ] ${item}`, `[x] ${item}`);

  it('merges content both sides changed on different lines, with no loser, whichever is newer', () => {
    for (const timestamp of [50, 200]) {
      const decision = merge({
        timestamp,
        baseVersion: 1,
        baseContent: base,
        stored: { ...stored, content: ticked('bread') },
        history: history({ content: 100 }, { content: 2 }),
        data: { content: ticked('milk') },
      });
      assert.deepEqual(decision.accepted, { content: '- [x] milk\n- [x] bread\n- [ ] eggs' });
      assert.deepEqual(decision.losers, []);
      assert.equal(decision.stale, false);
      assert.equal(decision.merged, true);
      // The merged text holds both writes: it keeps the newer stamp, so older writes lose to it.
      assert.equal(decision.stampedAt.content, Math.max(100, timestamp));
    }
  });

  it('falls back to last writer wins with a conflict copy when both changed the same line', () => {
    const decision = merge({
      timestamp: 200,
      baseVersion: 1,
      baseContent: base,
      stored: { ...stored, content: base.replace('milk', 'oat milk') },
      history: history({ content: 100 }, { content: 2 }),
      data: { content: ticked('milk') },
    });
    assert.deepEqual(decision.accepted, { content: ticked('milk') });
    assert.equal(decision.merged, false);
    assert.deepEqual(decision.losers, [
      { field: 'content', text: base.replace('milk', 'oat milk'), stampedAt: 100 },
    ]);
  });

  it('does not call it merged when the merge is exactly the text the change sent', () => {
    const both = '- [x] milk\n- [x] bread\n- [ ] eggs';
    const decision = merge({
      timestamp: 200,
      baseVersion: 1,
      baseContent: base,
      stored: { ...stored, content: ticked('bread') },
      history: history({ content: 100 }, { content: 2 }),
      data: { content: both },
    });
    assert.deepEqual(decision.accepted, { content: both });
    assert.equal(decision.merged, false);
  });

  it('does not merge without a known base, or when one side kept the base', () => {
    const storedTick = { ...stored, content: ticked('bread') };
    const withoutBase = merge({
      timestamp: 200,
      baseVersion: 1,
      stored: storedTick,
      history: history({ content: 100 }, { content: 2 }),
      data: { content: ticked('milk') },
    });
    assert.deepEqual(withoutBase.accepted, { content: ticked('milk') });
    assert.equal(withoutBase.merged, false);
    const keptBase = merge({
      timestamp: 200,
      baseVersion: 1,
      baseContent: base,
      stored: storedTick,
      history: history({ content: 100 }, { content: 2 }),
      data: { content: base },
    });
    assert.deepEqual(keptBase.accepted, { content: base });
  });
});

describe('mergeLines (D-SYNC-9)', () => {
  it('takes lines changed on one side only, even next to each other', () => {
    assert.equal(mergeLines('a\nb\nc', 'A\nb\nc', 'a\nB\nc'), 'A\nB\nc');
    assert.equal(mergeLines('a\nb\nc', 'a\nb\nc', 'a\nb\nC'), 'a\nb\nC');
  });

  it('keeps insertions and deletions of both sides', () => {
    assert.equal(mergeLines('a\nb\nc', 'a\nnew\nb\nc', 'a\nb'), 'a\nnew\nb');
    assert.equal(mergeLines('a\nb', 'first\na\nb', 'a\nb\nlast'), 'first\na\nb\nlast');
    assert.equal(mergeLines('a\nb', 'a\nx\nb', 'a\nB'), 'a\nx\nB');
  });

  it('takes the same change made on both sides once, line by line', () => {
    // A side that changed two neighbouring lines and one that changed only the first agree on it.
    assert.equal(mergeLines('a\nb\nc', 'A\nB\nc', 'A\nb\nc'), 'A\nB\nc');
    assert.equal(mergeLines('a\nb\nc', 'A\nB\nc', 'A\nb\nC'), 'A\nB\nC');
    assert.equal(mergeLines('a\nb\nc', 'A\nb\nc', 'A\nb\nC'), 'A\nb\nC');
    assert.equal(mergeLines('a\nb', 'a\nx\nb', 'a\nx\nb'), 'a\nx\nb');
  });

  it('is a conflict when both sides changed the same lines differently', () => {
    assert.equal(mergeLines('a\nb\nc', 'a\nB1\nc', 'a\nB2\nc'), undefined);
    assert.equal(mergeLines('a\nb\nc', 'a\nc', 'a\nB2\nc'), undefined); // deleted vs changed
    assert.equal(mergeLines('a\nb\nc', 'X\nY\nc', 'a\nZ\nc'), undefined); // overlapping ranges
    assert.equal(mergeLines('a\nb', 'a\nx\nb', 'a\ny\nb'), undefined); // insertions at one place
    assert.equal(mergeLines('one line', 'left', 'right'), undefined); // a title: one line
  });

  it('keeps line endings and a final newline as written', () => {
    assert.equal(mergeLines('a\r\nb\r\n', 'A\r\nb\r\n', 'a\r\nB\r\n'), 'A\r\nB\r\n');
    assert.equal(mergeLines('a\nb\n', 'A\nb\n', 'a\nb\nc\n'), 'A\nb\nc\n');
  });
});

describe('conflictCopyId (D-SYNC-8)', () => {
  it('is a stable version 5 uuid of note, field and timestamp', () => {
    const id = conflictCopyId(NOTE, 'title', 123);
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(conflictCopyId(NOTE.toUpperCase(), 'title', 123), id);
    assert.notEqual(conflictCopyId(NOTE, 'content', 123), id);
    assert.notEqual(conflictCopyId(NOTE, 'title', 124), id);
  });
});

describe('conflictCopyText (D-SYNC-8)', () => {
  it('titles the copy "<title> (conflict <ISO date>)"', () => {
    assert.deepEqual(conflictCopyText({ title: 'Plan', content: 'c', titleLost: false }, 0), {
      title: 'Plan (conflict 1970-01-01T00:00:00.000Z)',
      content: 'c',
    });
  });

  it('cuts a long title to the 1,000-character limit and keeps a cut losing title in the content', () => {
    const long = 'x'.repeat(1000);
    const copy = conflictCopyText({ title: long, content: 'c', titleLost: true }, 0);
    assert.equal(copy.title.length, 1000);
    assert.ok(copy.title.endsWith('… (conflict 1970-01-01T00:00:00.000Z)'));
    assert.equal(copy.content, `${long}\n\nc`);
    assert.equal(conflictCopyText({ title: long, content: 'c', titleLost: false }, 0).content, 'c');
  });
});
