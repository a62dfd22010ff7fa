/**
 * Issue 30 items 10 and 13 in Chromium, on a phone and a desktop: the composer with "Show
 * checkboxes" shows rows with boxes while typing, and grows; "Edit labels" (in the navigation)
 * creates, renames, merges and deletes labels, rewriting the notes' hashtags through the sync
 * engine, one write per note.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import type { ServerNote } from '../web/src/sync/index.js';
import {
  eventually,
  focus,
  signedInPage,
  skipWithoutChromium as skip,
  useBrowser,
} from './helpers/browser.js';
import { useOwner, useServer } from './helpers/server.js';
import { pullAll } from './helpers/sync.js';
import { holdLocalDatabase } from './web-local-database.js';

const browser = useBrowser();
const server = useServer();
const owner = useOwner(server, { overSocket: true });

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

async function openApp(options: Parameters<typeof signedInPage>[2] = {}) {
  const { context, page } = await signedInPage(browser, owner, options);
  await page.getByRole('textbox', { name: 'Take a note…' }).waitFor();
  return { context, page };
}

const byContent = async (content: string) =>
  (await pullAll(owner)).find((note: ServerNote) => note.content === content);

for (const [device, options] of [
  ['desktop', {}],
  ['phone', PHONE],
] as const) {
  describe(`the composer's list on a ${device}`, { skip }, () => {
    let context: BrowserContext;
    let page: Page;
    before(async () => ({ context, page } = await openApp(options)));
    after(() => context?.close());

    it('shows each item with its box as it is typed, grows, and makes a list note', async () => {
      const composer = page.locator('form.composer');
      const box = page.getByRole('textbox', { name: 'Take a note…' });
      await box.click();
      await page.getByRole('textbox', { name: 'Title' }).fill(`Groceries ${device}`);
      await composer.getByRole('button', { name: 'Show checkboxes' }).click();
      await box.pressSequentially('milk');
      // The item being typed has its box already (drawn, not a control).
      assert.equal(await composer.locator('.item-box').isVisible(), true);
      const before = (await composer.boundingBox())!.height;
      await box.press('Enter');
      await box.pressSequentially('bread');
      await box.press('Enter');
      await box.pressSequentially('eggs');
      const milk = composer.getByRole('checkbox', { name: 'milk' });
      await milk.waitFor();
      await composer.getByRole('checkbox', { name: 'bread' }).waitFor();
      assert.equal(await box.inputValue(), 'eggs');
      assert.equal(
        await page.evaluate(() => document.activeElement?.getAttribute('aria-label')),
        'Take a note…',
      );
      const grown = (await composer.boundingBox())!.height;
      assert.ok(grown >= before + 2 * 30, `the composer grew with its rows (${before} → ${grown} px)`);
      if (device === 'phone') {
        const size = (await milk.boundingBox())!;
        assert.ok(size.width >= 24 && size.height >= 24, `a 24 px box (${size.width}×${size.height})`);
      }
      // Several lines pasted at once are several items.
      await box.press('Enter');
      await box.fill('butter\njam\n');
      await composer.getByRole('checkbox', { name: 'jam' }).waitFor();
      await milk.check();
      await page.screenshot({ path: `.tmp/composer-list-${device}.png` });

      await composer.getByRole('button', { name: 'Close' }).click();
      const card = page.getByRole('article', { name: `Groceries ${device}` });
      // A ticked item is counted on the card, not shown.
      for (const item of ['bread', 'eggs', 'butter', 'jam'])
        await card.getByRole('checkbox', { name: item }).waitFor();
      await focus(page);
      await eventually(async () => {
        const note = (await pullAll(owner)).find((each: ServerNote) => each.title === `Groceries ${device}`);
        assert.deepEqual(
          [note?.content, note?.checklistMode],
          ['- [x] milk\n- [ ] bread\n- [ ] eggs\n- [ ] butter\n- [ ] jam', true],
        );
      });
    });

    it('"Hide checkboxes" turns the items back into lines of text', async () => {
      const composer = page.locator('form.composer');
      const box = page.getByRole('textbox', { name: 'Take a note…' });
      await box.click();
      await composer.getByRole('button', { name: 'Show checkboxes' }).click();
      await box.pressSequentially('one');
      await box.press('Enter');
      await box.pressSequentially('two');
      await composer.getByRole('button', { name: 'Hide checkboxes' }).click();
      assert.equal(await composer.getByRole('checkbox').count(), 0);
      assert.equal(await box.inputValue(), 'one\ntwo');
      await composer.getByRole('button', { name: 'Close' }).click();
      await focus(page);
      await eventually(async () => assert.ok(await byContent('one\ntwo'), 'the note is on the server'));
    });
  });
}

describe('Edit labels', { skip }, () => {
  let context: BrowserContext;
  let page: Page;
  const ids: Record<string, string> = {};
  before(async () => {
    for (const [name, fields] of Object.entries({
      report: { title: 'Report #work', content: 'due friday' },
      meeting: { title: 'Meeting', content: 'agenda for #work today\n```\n#work stays in code\n```' },
      chips: { title: 'Chores', content: 'sweep\n#work #home' },
      garden: { title: 'Garden', content: 'plant roses\n#home' },
    })) {
      const created = await owner.post('/api/notes', fields);
      ids[name] = created.body.id;
    }
    ({ context, page } = await openApp());
    await page.getByRole('link', { name: 'work' }).waitFor();
  });
  after(() => context?.close());

  const note = async (name: string) =>
    (await pullAll(owner)).find((each: ServerNote) => each.id === ids[name]) as ServerNote;
  const dialog = () => page.getByRole('dialog', { name: 'Edit labels' });
  const labelField = (name: string) => dialog().getByRole('textbox', { name: `Label ${name}` });

  it('opens from the navigation and shows each label in a field holding its name', async () => {
    await page.getByRole('navigation').getByRole('button', { name: 'Edit labels' }).click();
    await dialog().waitFor();
    const values = await dialog()
      .getByRole('textbox')
      .evaluateAll((fields) => fields.map((field) => (field as HTMLInputElement).value));
    assert.deepEqual(values, ['', 'home', 'work']);
    await page.screenshot({ path: '.tmp/edit-labels.png' });
  });

  it('renames a label with Enter: every note’s hashtags, one write each, kept in the history', async () => {
    const before = await note('report');
    await labelField('work').fill('job');
    await labelField('work').press('Enter');
    await focus(page);
    await eventually(async () => {
      assert.equal((await note('report')).title, 'Report #job');
      assert.equal((await note('meeting')).content, 'agenda for #job today\n```\n#work stays in code\n```');
      assert.equal((await note('chips')).content, 'sweep\n#job #home');
    });
    assert.equal((await note('report')).version, before.version + 1, 'one write');
    const revisions = await owner.get(`/api/notes/${ids.report}/revisions`);
    assert.equal(revisions.body[0].title, 'Report #job');
    await page.getByRole('link', { name: 'job' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'work', exact: true }).count(), 0);
    await labelField('job').waitFor();
  });

  it('renames onto an existing label after asking: a merge', async () => {
    await labelField('job').fill('home');
    await labelField('job').press('Enter');
    const ask = page.getByRole('alertdialog', { name: 'Merge labels?' });
    await ask.getByRole('button', { name: 'Cancel' }).waitFor();
    await ask.getByRole('button', { name: 'Merge' }).click();
    await focus(page);
    await eventually(async () => {
      assert.equal((await note('chips')).content, 'sweep\n#home');
      assert.equal((await note('report')).title, 'Report #home');
      assert.deepEqual((await note('meeting')).tags, ['home']);
    });
    assert.equal(await labelField('job').count(), 0);
  });

  it('deletes a label after asking: the notes stay, without it', async () => {
    await dialog().getByRole('button', { name: 'Delete label home' }).click();
    const ask = page.getByRole('alertdialog', { name: 'Delete label?' });
    await ask.getByRole('button', { name: 'Cancel' }).waitFor();
    await ask.getByRole('button', { name: 'Delete' }).click();
    await focus(page);
    await eventually(async () => {
      assert.equal((await note('garden')).content, 'plant roses');
      assert.equal((await note('meeting')).content, 'agenda for home today\n```\n#work stays in code\n```');
      assert.deepEqual((await note('chips')).tags, []);
    });
    assert.equal(await page.getByRole('link', { name: 'home' }).count(), 0);
  });

  it('creates a label, which the navigation lists before any note has it', async () => {
    await dialog().getByRole('textbox', { name: 'Create new label' }).fill('Ideas');
    await dialog().getByRole('textbox', { name: 'Create new label' }).press('Enter');
    await labelField('ideas').waitFor();
    assert.equal(await labelField('ideas').inputValue(), 'ideas');
    await page.screenshot({ path: '.tmp/edit-labels-created.png' });
    await dialog().getByRole('button', { name: 'Done' }).click();
    await page.getByRole('link', { name: 'ideas' }).waitFor();
  });

  it('a card’s "Labels" gives the note a label and takes it away', async () => {
    const card = page.getByRole('article', { name: 'Garden' });
    await card.hover();
    await card.getByRole('button', { name: 'Labels' }).click();
    const labelNote = page.getByRole('dialog', { name: 'Label note' });
    await labelNote.getByRole('checkbox', { name: 'ideas' }).check();
    await focus(page);
    await eventually(async () => assert.equal((await note('garden')).content, 'plant roses\n#ideas'));
    await labelNote.getByRole('textbox', { name: 'Enter label name' }).fill('flowers');
    await labelNote.getByRole('textbox', { name: 'Enter label name' }).press('Enter');
    await labelNote.getByRole('checkbox', { name: 'flowers' }).waitFor();
    assert.equal(await labelNote.getByRole('checkbox', { name: 'flowers' }).isChecked(), true);
    await page.screenshot({ path: '.tmp/label-note.png' });
    await labelNote.getByRole('checkbox', { name: 'ideas' }).uncheck();
    await labelNote.getByRole('button', { name: 'Done' }).click();
    await focus(page);
    await eventually(async () => assert.equal((await note('garden')).content, 'plant roses\n#flowers'));
  });

  it('a tick stays as clicked while its write waits, whatever renders the dialog meanwhile', async () => {
    const card = page.getByRole('article', { name: 'Garden' });
    await card.hover();
    await card.getByRole('button', { name: 'Labels' }).click();
    const labelNote = page.getByRole('dialog', { name: 'Label note' });
    const letGo = await holdLocalDatabase(page);
    const ideas = labelNote.getByRole('checkbox', { name: 'ideas' });
    await ideas.check();
    // Typing renders the dialog again while the note is still without the label.
    await labelNote.getByRole('textbox', { name: 'Enter label name' }).pressSequentially('tre');
    assert.equal(await ideas.isChecked(), true);
    assert.equal((await note('garden')).content, 'plant roses\n#flowers');
    await letGo();
    await labelNote.getByRole('button', { name: 'Done' }).click();
    await focus(page);
    await eventually(async () =>
      assert.equal((await note('garden')).content, 'plant roses\n#flowers #ideas'),
    );
    assert.equal(await ideas.count(), 0);
  });
});
