/** The web app's pure rules: display order, sortOrder of new and moved notes, checklist edits,
 * labels, search and the masonry layout (web/src/model), and the new cards each frame has room for. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { conflictCopyText } from '../src/features/sync/merge.js';
import { extractHashtags } from '../src/shared/hashtags.js';
import { NOTE_DEFAULTS } from '../src/shared/noteDefaults.js';
import { NEW_CARDS_PER_FRAME, takeNewCards, whenNewCardRoom } from '../web/src/app/frameBudget.js';
import {
  addItem,
  backspaceItem,
  checklistItems,
  fromChecklist,
  indentItem,
  moveItem,
  moveItemTo,
  removeItem,
  setItemChecked,
  setItemText,
  splitItem,
  toChecklist,
} from '../web/src/model/checklist.js';
import {
  conflictMark,
  conflictOriginal,
  displayTitle,
  resolveConflict,
  wordChanges,
} from '../web/src/model/conflicts.js';
import { addLabel, allLabels, isTagsOnlyLine, labelName, renameLabel } from '../web/src/model/labels.js';
import { mergeIncoming, movedPosition } from '../web/src/model/liveText.js';
import { columnCount, columnLeft, estimatedHeight, gridGeometry } from '../web/src/model/masonry.js';
import {
  compareNotes,
  SORT_ORDER_STEP,
  sortOrderOnTop,
  sortOrdersForMove,
} from '../web/src/model/ordering.js';
import { LAPSES_AFTER_MS, presenceText, withoutLapsed, withPresence } from '../web/src/model/presence.js';
import { noteMatcher, searchAsYouType } from '../web/src/model/search.js';
import type { LocalNote } from '../web/src/sync/index.js';

let nextId = 0;
function note(fields: Partial<LocalNote> = {}): LocalNote {
  return {
    ...NOTE_DEFAULTS,
    id: `n${nextId++}`,
    ownerId: 1,
    trashedAt: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    version: 1,
    reminder: null,
    tags: [],
    attachments: [],
    pending: false,
    ...fields,
  };
}

describe('display order (docs/api.md: pinned, sortOrder, then newest update)', () => {
  it('puts pinned first, then ascending sortOrder, then the most recently updated', () => {
    const notes = [
      note({ title: 'old', sortOrder: 5, updatedAt: '2026-01-01T00:00:00.000Z' }),
      note({ title: 'new', sortOrder: 5, updatedAt: '2026-02-01T00:00:00.000Z' }),
      note({ title: 'low', sortOrder: -10 }),
      note({ title: 'pinned', pinned: true, sortOrder: 100 }),
    ];
    assert.deepEqual(
      notes.sort(compareNotes).map((n) => n.title),
      ['pinned', 'low', 'new', 'old'],
    );
  });

  it('gives a new note a sortOrder above every note', () => {
    assert.equal(sortOrderOnTop([]), 0);
    assert.equal(sortOrderOnTop([note({ sortOrder: 3 }), note({ sortOrder: -7 })]), -7 - SORT_ORDER_STEP);
  });

  it('moves with one write (the midpoint) when there is room, and lands where asked', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: -1e6, max: 1e6 }), { minLength: 2, maxLength: 12 }),
        fc.nat(),
        fc.nat(),
        (orders, from, to) => {
          const section = orders.sort((a, b) => a - b).map((sortOrder) => note({ sortOrder }));
          const moved = section[from % section.length]!;
          const target = to % section.length;
          const writes = sortOrdersForMove(section, moved, target);
          const after = section
            .map((n) => ({ ...n, sortOrder: writes.get(n.id) ?? n.sortOrder }))
            .sort(compareNotes)
            .map((n) => n.id);
          const expected = section.filter((n) => n !== moved).map((n) => n.id);
          expected.splice(target, 0, moved.id);
          assert.deepEqual(after, expected);
        },
      ),
    );
  });

  it('renumbers the section when neighbours leave no room (notes that all kept sortOrder 0)', () => {
    const section = [note(), note(), note()];
    const [first, second, third] = section;
    const writes = sortOrdersForMove(section, first!, 1);
    assert.deepEqual(
      [...writes],
      [
        [second!.id, 0],
        [first!.id, SORT_ORDER_STEP],
        [third!.id, 2 * SORT_ORDER_STEP],
      ],
    );
  });
});

describe('checklist edits (D-NOTE-6)', () => {
  const list = '- [ ] milk\n- [x] bread\n- [ ] eggs';

  it('ticks by changing one character: no line moves (Completed is display only)', () => {
    assert.equal(setItemChecked(list, 0, true), '- [x] milk\n- [x] bread\n- [ ] eggs');
    assert.equal(setItemChecked(list, 1, false), '- [ ] milk\n- [ ] bread\n- [ ] eggs');
  });

  it('reads items with the server reader: not inside code fences', () => {
    const content = '- [ ] real\n```\n- [ ] code\n```';
    assert.deepEqual(
      checklistItems(content).map((item) => item.text),
      ['real'],
    );
    assert.equal(setItemChecked(content, 2, true), content);
  });

  it('edits, adds after the last item, removes and reorders items', () => {
    assert.equal(setItemText(list, 2, 'ham'), '- [ ] milk\n- [x] bread\n- [ ] ham');
    assert.equal(addItem('Shopping\n- [ ] milk\nnotes', 'tea'), 'Shopping\n- [ ] milk\n- [ ] tea\nnotes');
    assert.equal(addItem('', 'tea'), '- [ ] tea');
    assert.equal(removeItem(list, 1), '- [ ] milk\n- [ ] eggs');
    assert.equal(moveItem(list, 0, -1).content, list);
  });

  it('moves an item past the next open item, stepping over ticked ones, the caret with it', () => {
    assert.deepEqual(moveItem(list, 0, 1), { content: '- [ ] eggs\n- [x] bread\n- [ ] milk', focus: 2 });
    assert.deepEqual(moveItem(list, 2, -1), { content: '- [ ] eggs\n- [x] bread\n- [ ] milk', focus: 0 });
    assert.deepEqual(moveItem('- [x] a\ntext\n- [ ] b\n- [x] c', 3, -1), {
      content: '- [x] c\ntext\n- [ ] b\n- [x] a',
      focus: 0,
    });
  });

  it('moves an item with its sub-items, and a sub-item alone', () => {
    const nested = '- [ ] a\n  - [ ] a1\n  - [ ] a2\n- [ ] b';
    assert.deepEqual(moveItem(nested, 0, 1), {
      content: '- [ ] b\n- [ ] a\n  - [ ] a1\n  - [ ] a2',
      focus: 1,
    });
    assert.deepEqual(moveItem(nested, 3, -1), {
      content: '- [ ] b\n- [ ] a\n  - [ ] a1\n  - [ ] a2',
      focus: 0,
    });
    assert.deepEqual(moveItem(nested, 1, 1), {
      content: '- [ ] a\n  - [ ] a2\n  - [ ] a1\n- [ ] b',
      focus: 2,
    });
    assert.equal(moveItemTo(nested, 0, 3, 'after').content, '- [ ] b\n- [ ] a\n  - [ ] a1\n  - [ ] a2');
    assert.equal(moveItemTo(nested, 3, 0, 'before').content, '- [ ] b\n- [ ] a\n  - [ ] a1\n  - [ ] a2');
    // Dropped after an item with sub-items, an item goes after them (it would adopt them otherwise).
    assert.equal(
      moveItemTo(`- [ ] z\n${nested}`, 0, 1, 'after').content,
      '- [ ] a\n  - [ ] a1\n  - [ ] a2\n- [ ] z\n- [ ] b',
    );
    // A ticked target is not among the open items: nothing moves.
    assert.equal(moveItemTo(list, 0, 1, 'after').content, list);
  });

  it('keeps every item through any sequence of moves (fast-check)', () => {
    const line = fc
      .tuple(fc.boolean(), fc.boolean(), fc.constantFrom('a', 'b', 'c', 'd', 'e'))
      .map(([sub, done, text]) => `${sub ? '  ' : ''}- [${done ? 'x' : ' '}] ${text}`);
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 8 }),
        fc.array(fc.tuple(fc.nat(7), fc.boolean())),
        (lines, moves) => {
          let content = lines.join('\n');
          for (const [at, down] of moves)
            content = moveItem(content, at % lines.length, down ? 1 : -1).content;
          assert.deepEqual(content.split('\n').sort(), [...lines].sort());
          // Ticks never change and ticked lines never move (Completed is display only).
          content.split('\n').forEach((text, index) => {
            assert.equal(text.includes('[x]'), lines[index]!.includes('[x]'));
          });
        },
      ),
    );
  });

  it('Enter splits an item at the caret; Backspace removes, un-indents or joins', () => {
    assert.deepEqual(splitItem('- [x] milkbread\n- [ ] eggs', 0, 4), {
      content: '- [x] milk\n- [ ] bread\n- [ ] eggs',
      focus: 1,
      caret: 0,
    });
    assert.equal(splitItem('  - [ ] sub', 0, 3).content, '  - [ ] sub\n  - [ ] ');
    assert.deepEqual(backspaceItem('- [ ] milk\n- [ ] \n- [ ] eggs', 1), {
      content: '- [ ] milk\n- [ ] eggs',
      focus: 0,
    });
    assert.deepEqual(backspaceItem('- [ ] \n- [ ] eggs', 0), { content: '- [ ] eggs', focus: 0 });
    assert.deepEqual(backspaceItem('- [ ] ', 0), { content: '', focus: -1 });
    assert.deepEqual(backspaceItem('- [ ] a\n  - [ ] b', 1), { content: '- [ ] a\n- [ ] b', focus: 1 });
    assert.deepEqual(backspaceItem('- [ ] milk\n- [x] x\n- [ ] shake', 2), {
      content: '- [ ] milkshake\n- [x] x',
      focus: 0,
      caret: 4,
    });
    assert.equal(backspaceItem('- [ ] first', 0), null);
  });

  it('indents one level (Tab) and back (Shift+Tab), never the first item', () => {
    const two = '- [ ] a\n- [ ] b';
    assert.equal(indentItem(two, 1, true).content, '- [ ] a\n  - [ ] b');
    assert.equal(indentItem(indentItem(two, 1, true).content, 1, true).content, '- [ ] a\n  - [ ] b');
    assert.equal(indentItem('- [ ] a\n\t- [ ] b', 1, false).content, two);
    assert.equal(indentItem(two, 0, true).content, two);
    assert.deepEqual(
      checklistItems('- [ ] a\n  - [x] b').map((item) => item.indented),
      [false, true],
    );
  });

  it('converts text to a list and back without losing words', () => {
    assert.equal(toChecklist('milk\n\nbread'), '- [ ] milk\n\n- [ ] bread');
    assert.equal(fromChecklist(list), 'milk\nbread\neggs');
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z][a-z ]{0,10}[a-z]$/), { maxLength: 6 }), (lines) => {
        const text = lines.join('\n');
        assert.equal(fromChecklist(toChecklist(text)), text);
      }),
    );
  });
});

describe('labels (hashtags, D-TAG-1)', () => {
  it('lists the hashtags of the notes with the server rules', () => {
    assert.deepEqual(
      allLabels([note({ content: 'a #Work and #home' }), note({ title: '#work', content: '`#no`' })]),
      ['home', 'work'],
    );
  });

  it('appends to a trailing tags-only line, or starts one', () => {
    assert.equal(addLabel('milk', 'Errands'), 'milk\n#errands');
    assert.equal(addLabel('milk\n#errands', '#home'), 'milk\n#errands #home');
    assert.equal(addLabel('', 'x y'), '#x-y');
    assert.equal(labelName('  ##Big Trip '), 'big-trip');
    assert.ok(isTagsOnlyLine('#a #b'));
    assert.ok(!isTagsOnlyLine('see #a'));
  });
});

describe('Edit labels: renaming, merging and deleting a label in a note (issue 30 item 13)', () => {
  it('renames every hashtag of the label outside code, in the title too, and nothing else', () => {
    assert.deepEqual(
      renameLabel(
        { title: 'Trip #Work', content: 'about #work/ stuff #workshop\n```\n#work\n```\n#work #home' },
        'work',
        'job',
      ),
      { title: 'Trip #job', content: 'about #job stuff #workshop\n```\n#work\n```\n#job #home' },
    );
  });
  it('merging onto a label the note has keeps one of each on a tags-only line', () => {
    assert.deepEqual(renameLabel({ title: '', content: 'see #a\n#a #b' }, 'a', 'b'), {
      content: 'see #b\n#b',
    });
  });
  it('deleting drops it from a tags-only line (and the line when empty) and keeps the word in a sentence', () => {
    assert.deepEqual(renameLabel({ title: '', content: 'a #Work day\n#work' }, 'work', null), {
      content: 'a Work day',
    });
    assert.deepEqual(renameLabel({ title: 'x', content: 'y' }, 'work', null), {});
  });
  it('afterwards the note has the new label instead of the old, and its other labels unchanged', () => {
    const token = fc.constantFrom('#a', '#b', '#A', '#c', 'word', '#a/', '```', '\n', '- [ ] #a');
    const text = fc.array(token, { maxLength: 12 }).map((tokens) => tokens.join(' '));
    fc.assert(
      fc.property(text, text, fc.constantFrom('b', 'd', null), (title, content, to) => {
        const before = extractHashtags(title, content);
        const changed = { title, content, ...renameLabel({ title, content }, 'a', to) };
        const after = extractHashtags(changed.title, changed.content);
        const expected = new Set(before.filter((tag) => tag !== 'a'));
        if (before.includes('a') && to !== null) expected.add(to);
        assert.deepEqual(after, [...expected].sort());
      }),
    );
  });
});

describe('search', () => {
  const trip = note({ title: 'Trip', content: 'Lisbon and Porto #travel', color: 'coral' });
  const list = note({ title: 'Groceries', content: '- [ ] crème fraîche', checklistMode: true });
  const trashed = note({ title: 'Trip draft', trashed: true });
  const find = (query: string, filters = {}) =>
    [trip, list, trashed].filter(noteMatcher(query, filters)).map((n) => n.title);

  it('matches every word, ignoring case and accents; never trashed notes', () => {
    assert.deepEqual(find('trip'), ['Trip']);
    assert.deepEqual(find('PORTO lisbon'), ['Trip']);
    assert.deepEqual(find('creme'), ['Groceries']);
    assert.deepEqual(find('porto milk'), []);
  });

  it('folds ß/ss, æ/ae, œ/oe, ø/o like accents (issue 30 item 15), both ways', () => {
    const street = note({ title: 'Große Straße', content: 'Æble, Œuvre, Øresund' });
    const found = (query: string) => noteMatcher(query, {})(street);
    for (const query of ['grosse strasse', 'GROẞE', 'straße', 'aeble', 'oeuvre', 'oresund', 'ØRESUND'])
      assert.ok(found(query), query);
    assert.ok(!found('strase'));
  });

  it('filters by lists, color and label', () => {
    assert.deepEqual(find('', { lists: true }), ['Groceries']);
    assert.deepEqual(find('', { color: 'coral' }), ['Trip']);
    assert.deepEqual(find('', { label: 'travel' }), ['Trip']);
    assert.deepEqual(find('', { images: true }), []);
  });

  it('as you type, finds what a search over every note finds, typed forward, back or anew', () => {
    const word = fc.constantFrom(
      'trip',
      'Lisbon',
      'crème',
      'porto',
      'PO',
      'é',
      'list',
      '#travel',
      ' ',
      'ß',
      'ss',
      'æ',
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ title: word, content: fc.array(word).map((w) => w.join(' ')), trashed: fc.boolean() }),
          {
            maxLength: 12,
          },
        ),
        fc.array(
          fc.tuple(
            fc.array(word).map((w) => w.join('')),
            fc.constantFrom({}, { lists: true }),
          ),
          {
            maxLength: 12,
          },
        ),
        fc.integer({ min: 1, max: 4 }),
        fc.infiniteStream(fc.boolean()),
        (fields, typed, firstMatches, finishesNow) => {
          const notes = fields.map((f) => note(f));
          let pending: (() => void) | undefined;
          const search = searchAsYouType({
            firstMatches,
            later: (finish) => {
              pending = finish;
            },
            onWhole: () => {},
          });
          for (const [query, filters] of typed) {
            // Each query typed a character at a time, then the next one (often shorter); what a
            // keystroke left is finished before the next keystroke, or not.
            for (let end = 0; end <= query.length; end++) {
              const prefix = query.slice(0, end);
              const whole = notes.filter(noteMatcher(prefix, filters));
              const answer = search(notes, prefix, filters);
              // In part: the first of the whole answer, at least as many as a first frame shows.
              assert.deepEqual(answer, whole.slice(0, answer.length));
              assert.ok(answer.length >= Math.min(firstMatches, whole.length));
              // Whole, unless what is left is still to be looked for.
              if (!pending) assert.deepEqual(answer, whole);
              else if (finishesNow.next().value) {
                const finish = pending;
                pending = undefined;
                finish();
                assert.deepEqual(search(notes, prefix, filters), whole);
              }
            }
          }
        },
      ),
    );
  });

  it('answers a keystroke with the first notes found and looks for the rest after the frame', () => {
    const notes = Array.from({ length: 10 }, (_, index) => note({ title: `Trip ${index}` }));
    const later: Array<() => void> = [];
    let wholeAnswers = 0;
    const search = searchAsYouType({
      firstMatches: 3,
      later: (finish) => later.push(finish),
      onWhole: () => wholeAnswers++,
    });
    const first = search(notes, 'trip', {});
    assert.deepEqual(first, notes.slice(0, 3));
    assert.equal(later.length, 1);
    later[0]!();
    assert.equal(wholeAnswers, 1);
    assert.deepEqual(search(notes, 'trip', {}), notes);
    assert.deepEqual(first, notes.slice(0, 3), 'an answer given is never changed afterwards');

    // Typed on before the rest was looked for: the notes not yet read are read for the new query.
    assert.deepEqual(search(notes, 'trip 1', {}), [notes[1]]);
    assert.deepEqual(search(notes, '', {}), notes.slice(0, 3));
    assert.deepEqual(search(notes, 'trip 9', {}), [notes[9]]);
    for (const finish of later.slice(1)) finish();
    assert.equal(wholeAnswers, 1, 'an older search finished late says nothing');
    assert.deepEqual(search(notes, 'trip 9', {}), [notes[9]]);
  });
});

describe('small things on screen (issue 30)', () => {
  it("a conflict copy's title shows its time in the locale, not the API's ISO time", () => {
    const shown = displayTitle('Shopping (conflict 2026-11-26T13:49:07.000Z)');
    assert.match(shown, /^Shopping \(conflict .*2026.*\)$/);
    assert.doesNotMatch(shown, /T13:49|07\.000Z/);
    assert.equal(displayTitle('Shopping'), 'Shopping');
  });

  it('the status says "Can\'t reach the server" when the network is up but the server is not', async () => {
    const { syncText } = await import('../web/src/model/syncText.js');
    const offlineStatus = { phase: 'offline' as const, waiting: 2, lastSyncedAt: null };
    const original = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    try {
      for (const [onLine, text] of [
        [true, "Can't reach the server, 2 changes waiting"],
        [false, 'Offline, 2 changes waiting'],
      ] as const) {
        Object.defineProperty(globalThis, 'navigator', { value: { onLine }, configurable: true });
        assert.equal(syncText(offlineStatus), text);
      }
    } finally {
      if (original) Object.defineProperty(globalThis, 'navigator', original);
      else delete (globalThis as { navigator?: unknown }).navigator;
    }
  });
});

describe('masonry layout', () => {
  it('shows Keep-width columns, and two on a phone', () => {
    assert.equal(columnCount(390), 2);
    assert.equal(columnCount(1024), 4);
  });

  it('centres Keep-width columns, shares a phone between two, and centres the list', () => {
    const desktop = gridGeometry(1024, false);
    assert.deepEqual(desktop, { columns: 4, cardWidth: 240, gap: 16, left: 8 });
    assert.equal(columnLeft(desktop, 3), 8 + 3 * 256);
    // The last column ends where the centred grid does.
    assert.equal(columnLeft(desktop, 3) + desktop.cardWidth, 1024 - 8);
    const phone = gridGeometry(374, false);
    assert.deepEqual(phone, { columns: 2, cardWidth: 183, gap: 8, left: 0 });
    assert.equal(columnLeft(phone, 1) + phone.cardWidth, 374);
    assert.deepEqual(gridGeometry(1024, true), { columns: 1, cardWidth: 600, gap: 16, left: 212 });
    assert.deepEqual(gridGeometry(374, true), { columns: 1, cardWidth: 374, gap: 16, left: 0 });
  });

  it("estimates a card's height from what it shows: wrapped lines up to the card's cap, items, image, chips", () => {
    const height = (fields: Partial<LocalNote>, width = 240) =>
      estimatedHeight(note({ title: 'Title', ...fields }), width);
    const short = height({ content: 'milk' });
    const wrapped = height({ content: 'a rather longer line of text that wraps over two' });
    assert.ok(wrapped > short, 'a wrapped line adds a line');
    assert.ok(height({ content: 'word '.repeat(60) }, 600) < height({ content: 'word '.repeat(60) }, 240));
    // The card shows 16 lines at most: more text makes it no taller.
    assert.equal(height({ content: 'line\n'.repeat(40) }), height({ content: 'line\n'.repeat(16) }));
    assert.ok(height({ content: 'line\n'.repeat(16) }) > height({ content: 'line\n'.repeat(15) }));
    assert.ok(height({ title: '' }) < height({ title: 'Title' }));
    const list = height({ checklistMode: true, content: '- [ ] milk\n- [ ] bread\n- [x] eggs' });
    assert.ok(
      list > height({ checklistMode: true, content: '- [ ] milk\n- [x] eggs' }),
      'an open item adds a row',
    );
    assert.equal(
      list,
      height({ checklistMode: true, content: '- [ ] milk\n- [ ] bread\n- [x] eggs\n- [x] tea' }),
    );
    assert.ok(height({ tags: ['work'] }) > height({}), 'chips add a row');
    // An image's box is as tall as its ratio makes it at the card's width (4:3 when unknown).
    const image = (width: number | null, imageHeight: number | null) => ({
      id: 'a',
      noteId: 'n',
      filename: 'a.jpg',
      mimeType: 'image/jpeg',
      size: 1,
      thumbnailPath: null,
      width,
      height: imageHeight,
    });
    const withImages = (...images: ReturnType<typeof image>[]) =>
      height({ attachments: images } as Partial<LocalNote>);
    assert.equal(withImages(image(640, 480)) - height({}), 182);
    assert.equal(withImages(image(null, null)) - height({}), 182);
    assert.equal(withImages(image(480, 960)) - height({}), 482, 'a tall image at 1:2');
    // Two share a row of two boxes.
    assert.equal(withImages(image(640, 480), image(640, 480)) - height({}), 91);
  });
});

describe('conflict copies', () => {
  const note = (id: string, title: string, content: string, updatedAt = '2026-01-01T00:00:00.000Z') => ({
    id,
    title,
    content,
    trashed: false,
    updatedAt,
  });

  it("reads the server's mark back: the copy's own title and the time of its text", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.integer({ min: 0, max: Date.UTC(2100, 0, 1) }),
        (title, stampedAt) => {
          const copy = conflictCopyText({ title, content: '', titleLost: false }, stampedAt);
          assert.deepEqual(conflictMark(copy.title), { title, at: new Date(stampedAt) });
        },
      ),
    );
    assert.equal(conflictMark('Plans (conflict soon)'), null);
    assert.equal(conflictMark('Plans'), null);
  });

  it('finds the note a copy came from by its title, else by its unchanged content', () => {
    const copy = note(
      'c',
      conflictCopyText({ title: 'Plans', content: 'b', titleLost: false }, 0).title,
      'b',
    );
    const older = note('o1', 'Plans', 'x', '2026-01-01T00:00:00.000Z');
    const newer = note('o2', 'Plans', 'y', '2026-02-01T00:00:00.000Z');
    const trashed = { ...note('t', 'Plans', 'z', '2026-03-01T00:00:00.000Z'), trashed: true };
    assert.equal(conflictOriginal(copy, [copy, older, trashed, newer])?.id, 'o2');
    // The title lost: the note has the winning title and the same content.
    const titleCopy = note(
      'c2',
      conflictCopyText({ title: 'Mine', content: 'same', titleLost: true }, 0).title,
      'same',
    );
    assert.equal(conflictOriginal(titleCopy, [titleCopy, note('n', 'Theirs', 'same'), older])?.id, 'n');
    assert.equal(conflictOriginal(note('p', 'Plans', 'x'), [older]), undefined, 'not a copy');
  });

  it('Keep this, Keep that, Keep both: the text not kept goes to Trash, a kept copy loses its mark', () => {
    const copy = note(
      'c',
      conflictCopyText({ title: 'Plans', content: 'b', titleLost: false }, 0).title,
      'b',
    );
    const original = note('o', 'Plans', 'a');
    const table = [
      [
        'this',
        [
          { id: 'c', fields: { title: 'Plans' } },
          { id: 'o', fields: { trashed: true } },
        ],
      ],
      ['that', [{ id: 'c', fields: { trashed: true } }]],
      ['both', [{ id: 'c', fields: { title: 'Plans' } }]],
    ] as const;
    for (const [choice, writes] of table)
      assert.deepEqual(resolveConflict(choice, copy, original), writes, choice);
  });

  it("Compare's word changes spell the copy without the removed runs and the original without the added (fast-check)", () => {
    const text = fc
      .array(fc.constantFrom('milk', 'bread', 'eggs', ' ', '  ', '\n', 'tea,', '- [ ] '), { maxLength: 30 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, text, (original, copy) => {
        const changes = wordChanges(original, copy);
        const spelled = (skip: 'added' | 'removed') =>
          changes
            .filter((change) => !change[skip])
            .map((change) => change.value)
            .join('');
        assert.equal(spelled('removed'), copy);
        assert.equal(spelled('added'), original);
      }),
    );
  });

  it('Compare marks whole words: one word changed in a line is one removed and one added run', () => {
    assert.deepEqual(wordChanges('buy milk today', 'buy bread today'), [
      { value: 'buy ' },
      { value: 'milk', removed: true },
      { value: 'bread', added: true },
      { value: ' today' },
    ]);
    assert.deepEqual(wordChanges('same', 'same'), [{ value: 'same' }]);
  });
});

describe('new cards per frame (decision 0018)', () => {
  it("adds a grid's next cards once its frame is painted, never in that frame's callbacks", async (t) => {
    // Frames by hand: animation frame callbacks run in order, then the frame paints, then tasks.
    const callbacks: FrameRequestCallback[] = [];
    globalThis.requestAnimationFrame = (callback) => callbacks.push(callback);
    t.after(() => Reflect.deleteProperty(globalThis, 'requestAnimationFrame'));
    const paintThenRunTasks = async (duringFrame: () => void) => {
      for (const callback of callbacks.splice(0)) callback(0);
      duringFrame();
      await new Promise((resolve) => setTimeout(resolve));
    };
    let added = 0;
    const addCards = () => added++;

    // A keystroke's render, before its frame: the first cards.
    assert.equal(takeNewCards('query a', 100), NEW_CARDS_PER_FRAME);
    assert.equal(takeNewCards('query a', 100), 0);
    // The frame is late (a slow device), and the grid asks for its next cards before it: they
    // wait for it to be painted, as cards rendered in its callbacks would be painted with the first.
    whenNewCardRoom('query a', addCards);
    assert.equal(added, 0);
    await paintThenRunTasks(() => assert.equal(added, 0));
    assert.equal(added, 1);
    assert.equal(takeNewCards('query a', 94), NEW_CARDS_PER_FRAME);
    // The usual case: asked once that frame is painted, when the next has room, at once.
    await paintThenRunTasks(() => {});
    whenNewCardRoom('query a', addCards);
    assert.equal(added, 2);
    // Another keystroke has the whole room at once: the last view's cards will never paint.
    assert.equal(takeNewCards('query a', 88), NEW_CARDS_PER_FRAME);
    assert.equal(takeNewCards('query b', 3), 3);
    whenNewCardRoom('query b', addCards);
    assert.equal(added, 3);
    assert.equal(takeNewCards('query b', 100), NEW_CARDS_PER_FRAME - 3);
    // A grid gone (another view, the page left) is not rendered again.
    const cancel = whenNewCardRoom('query b', addCards);
    cancel();
    await paintThenRunTasks(() => {});
    assert.equal(added, 3);
  });
});

describe('a change from elsewhere in the open editor (issue 28)', () => {
  const line = fc.stringMatching(/^[a-z ]{0,8}$/);
  it('keeps the caret in its place in the text: a change after it leaves it, one before it moves it along', () => {
    fc.assert(
      fc.property(line, line, line, line, fc.nat(), (before, typed, after, changed, at) => {
        // The caret sits in `typed`, a line of its own between two lines changed elsewhere.
        const text = `${before}\n${typed}\n${after}`;
        const caret = before.length + 1 + (at % (typed.length + 1));
        const below = `${before}\n${typed}\n${changed}`;
        assert.equal(movedPosition(text, below, caret), caret);
        const above = `${changed}\n${typed}\n${after}`;
        const moved = movedPosition(text, above, caret);
        assert.equal(moved, caret + changed.length - before.length);
        assert.equal(
          above.slice(moved - (caret - before.length - 1), moved),
          typed.slice(0, caret - before.length - 1),
        );
      }),
    );
  });

  it('merges the incoming text with unsaved typing line by line; a clash keeps the typing', () => {
    assert.equal(mergeIncoming('a\nb', 'a\nb', 'a\nB'), 'a\nB');
    assert.equal(mergeIncoming('a\nb\nc', 'A\nb\nc', 'a\nb\nC'), 'A\nb\nC');
    assert.equal(mergeIncoming('a\nb', 'a!\nb', 'a?\nb'), 'a!\nb');
  });
});

describe('who else has a note open (issue 28)', () => {
  const event = (userId: number, name: string, here: boolean) => ({
    noteId: '00000000-0000-4000-8000-000000000001',
    userId,
    name,
    here,
  });
  it('names who is here, tells who just arrived, forgets who left or stopped saying so', () => {
    let state = withPresence(new Map(), event(2, 'Alice', true), 1_000);
    assert.equal(state.arrived, true);
    assert.equal(presenceText(state.here), 'Alice is here');
    state = withPresence(state.here, event(2, 'Alice', true), 2_000);
    assert.equal(state.arrived, false, 'said again: not new');
    state = withPresence(state.here, event(3, 'Bob', true), 3_000);
    state = withPresence(state.here, event(4, 'Carol', true), 3_000);
    assert.equal(presenceText(state.here), 'Alice, Bob and Carol are here');
    state = withPresence(state.here, event(3, 'Bob', false), 4_000);
    assert.equal(state.arrived, false);
    assert.equal(presenceText(state.here), 'Alice and Carol are here');
    const lapsed = withoutLapsed(state.here, 2_000 + LAPSES_AFTER_MS);
    assert.equal(presenceText(lapsed), 'Carol is here', "Alice's claim lapsed");
    assert.equal(withoutLapsed(lapsed, 0), lapsed);
    assert.equal(presenceText(withoutLapsed(lapsed, 3_000 + LAPSES_AFTER_MS)), '');
  });
});
