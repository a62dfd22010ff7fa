import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useOwner, useServer } from './helpers/server.js';
import { pullAll } from './helpers/sync.js';
import { openDevice, userIdOf } from './web-sync-helpers.js';

/** The web app's sync engine (web/src/sync, issue 13) on simulated devices against the real server. */

describe('web sync engine: basics', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('creates a note offline, pushes it, and a second device pulls it', async () => {
    const userId = await userIdOf(owner);
    const phone = await openDevice(owner, userId);
    const laptop = await openDevice(owner, userId);
    const note = await phone.engine.create({ title: 'Trip', content: '- [ ] passport' });
    assert.equal(note.pending, true);
    assert.equal(phone.engine.status().waiting, 1);
    await phone.engine.syncNow();
    assert.equal(phone.engine.status().waiting, 0);
    assert.equal(phone.engine.status().phase, 'idle');
    assert.equal(phone.engine.notes().get(note.id)?.pending, false);
    assert.equal(phone.engine.notes().get(note.id)?.version, 1);
    await laptop.engine.syncNow();
    assert.equal(laptop.engine.notes().get(note.id)?.title, 'Trip');
    const onServer = (await pullAll(owner)).find((n) => n.id === note.id);
    assert.equal(onServer.content, '- [ ] passport');
    await phone.engine.close();
    await laptop.engine.close();
  });
});
