import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { sessionActor } from '../src/actor.js';
import { checklistItems, setItemChecked } from '../src/features/notes/contentEdits.js';
import { renderContent } from '../src/features/sharing/page.js';
import { extractHashtags } from '../src/shared/hashtags.js';
import { readLines } from '../src/shared/markdown.js';
import { useOwner, useServer } from './helpers/server.js';

const FENCE = '```';

/**
 * Each case names the task items it holds and the hashtags that are code. Every line carries a
 * hashtag, so hashtag extraction shows where each reader thinks code starts and ends.
 */
interface Case {
  name: string;
  content: string;
  items: { text: string; checked: boolean }[];
  /** Hashtags on lines that are code. */
  code: string[];
}

const CASES: Case[] = [
  {
    name: 'every bullet of D-NOTE-6, indented, with x or X',
    content: '- [ ] dash #a\n* [x] star #b\n+ [X] plus #c\n  - [ ] nested #d',
    items: [
      { text: 'dash #a', checked: false },
      { text: 'star #b', checked: true },
      { text: 'plus #c', checked: true },
      { text: 'nested #d', checked: false },
    ],
    code: [],
  },
  {
    name: 'not task lines',
    content:
      '-[ ] no space #a\n- [y] other mark #b\n1. [ ] ordered #c\n    ```\n- [ ] after indented code #d',
    items: [{ text: 'after indented code #d', checked: false }],
    code: [],
  },
  {
    name: 'a task line inside a backtick fence',
    content: `${FENCE}\n- [ ] inside #a\n${FENCE}\n- [ ] outside #b`,
    items: [{ text: 'outside #b', checked: false }],
    code: ['a'],
  },
  {
    name: 'a tilde line does not close a backtick fence',
    content: `${FENCE} md\n~~~\n- [ ] still code #a\n${FENCE}\n- [ ] after #b`,
    items: [{ text: 'after #b', checked: false }],
    code: ['a'],
  },
  {
    name: 'a shorter run does not close a fence, a longer one does',
    content: '~~~~\n~~~\n- [ ] code #a\n~~~~~~\n- [ ] after #b',
    items: [{ text: 'after #b', checked: false }],
    code: ['a'],
  },
  {
    name: 'a closing fence with text after it is code',
    content: `${FENCE}\n${FENCE} js #a\n- [ ] code #b\n   ${FENCE}  \n- [ ] after #c`,
    items: [{ text: 'after #c', checked: false }],
    code: ['a', 'b'],
  },
  {
    name: 'a backtick run with a backtick in its info string opens nothing',
    content: `${FENCE} a\`b #a\n- [ ] item #b`,
    items: [{ text: 'item #b', checked: false }],
    code: [],
  },
  {
    name: 'a fence never closed runs to the end',
    content: '- [ ] before #a\r\n~~~\r\n- [ ] code #b\r\n\r\n- [x] code #c',
    items: [{ text: 'before #a', checked: false }],
    code: ['b', 'c'],
  },
  {
    name: 'lines ending in \\r alone',
    content: '- [ ] one #a\r~~~\r- [ ] code #b\r~~~\r- [x] two #c',
    items: [
      { text: 'one #a', checked: false },
      { text: 'two #c', checked: true },
    ],
    code: ['b'],
  },
];

/** The checkboxes of a share page, as (label, checked). Labels here need no HTML unescaping. */
function checkboxes(html: string): { text: string; checked: boolean }[] {
  return [...html.matchAll(/<input type="checkbox" disabled( checked)?><span>(.*?)<\/span>/g)].map((m) => ({
    text: m[2]!.trim(),
    checked: m[1] !== undefined,
  }));
}

const pageItems = (content: string) => checkboxes(renderContent(content));

/** Hashtags on lines that are not code: what D-TAG-1 makes tags of. */
const tagsOutsideCode = ({ content, code }: Case) =>
  [...content.matchAll(/#([a-z])\b/g)]
    .map((m) => m[1]!)
    .filter((tag) => !code.includes(tag))
    .sort();

describe('one Markdown reader for the MCP checklist edit, the share page and hashtags (D-NOTE-6, D-TAG-1)', () => {
  for (const { name, content, items, code } of CASES) {
    it(`agrees on ${name}`, () => {
      const mcp = checklistItems(content).map(({ text, checked }) => ({ text, checked }));
      assert.deepEqual(mcp, items, 'MCP set_checklist_item');
      assert.deepEqual(pageItems(content), items, 'share page');
      assert.deepEqual(
        extractHashtags('', content),
        tagsOutsideCode({ name, content, items, code }),
        'hashtags',
      );
    });

    it(`ticks, on ${name}, exactly the items the share page shows`, () => {
      let ticked = content;
      for (const item of checklistItems(content)) ticked = setItemChecked(ticked, item, true);
      assert.deepEqual(
        pageItems(ticked),
        items.map(({ text }) => ({ text, checked: true })),
      );
      const changed = [...ticked].flatMap((char, i) => (char === content[i] ? [] : [i]));
      assert.ok(changed.length <= items.length, 'only the marks change');
    });
  }
});

describe('the running app reads note content the same way on every path (D-NOTE-6, D-TAG-1)', () => {
  const server = useServer();
  const owner = useOwner(server);

  for (const testCase of CASES) {
    it(`stores tags, renders the page and ticks items alike: ${testCase.name}`, async () => {
      const created = await owner.post('/api/notes', { checklistMode: true, content: testCase.content });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(created.body.tags, tagsOutsideCode(testCase));
      const { token } = (await owner.post(`/api/notes/${created.body.id}/share`)).body;
      const page = await owner.get(`/s/${token}`);
      assert.deepEqual(checkboxes(page.text), testCase.items);
      // The service function behind MCP's set_checklist_item, as the owner.
      const { notes } = server.app.services;
      const actor = sessionActor({ id: created.body.ownerId, is_owner: 1 });
      for (const index of testCase.items.keys())
        await notes.setChecklistItem(actor, created.body.id, { index }, true);
      const ticked = await owner.get(`/s/${token}`);
      assert.deepEqual(
        checkboxes(ticked.text),
        testCase.items.map(({ text }) => ({ text, checked: true })),
      );
    });
  }
});

describe('readLines', () => {
  it('imports nothing, so that the web app can use it as it is', () => {
    const source = fs.readFileSync('src/shared/markdown.ts', 'utf8');
    assert.doesNotMatch(source, /^\s*import\b|\brequire\(|\bimport\(/m);
  });

  it('gives each line its offset in the content, whatever the line ending', () => {
    const content = 'a\r\nb\rc\n\nd';
    assert.deepEqual(
      readLines(content).map(({ text, offset }) => [text, offset]),
      [
        ['a', 0],
        ['b', 3],
        ['c', 5],
        ['', 7],
        ['d', 8],
      ],
    );
    for (const { text, offset } of readLines(content))
      assert.equal(content.slice(offset, offset + text.length), text);
  });

  it('marks the fence lines themselves as code', () => {
    assert.deepEqual(
      readLines('~~~\nx\n~~~\ny').map((line) => line.kind),
      ['code', 'code', 'code', 'other'],
    );
  });

  it('points markOffset at the character between the brackets', () => {
    const content = 'intro\n\t* [X] done';
    const [, task] = readLines(content);
    assert.equal(task?.kind, 'task');
    if (task?.kind === 'task') {
      assert.equal(content[task.markOffset], 'X');
      assert.equal(task.label, 'done');
    }
  });
});
