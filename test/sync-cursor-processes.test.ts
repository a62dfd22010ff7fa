import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setupOwner, TestClient } from './helpers/client.js';
import { onPostgres } from './helpers/postgres.js';
import { withServerProcesses } from './helpers/server.js';

const PROCESSES = 3;
const NOTES_PER_WRITER = 120;

/**
 * The sync cursor across processes (docs/decisions/0016-sync-cursor-across-processes.md):
 * writers on three server processes of one PostgreSQL database, and a puller that passes each
 * pull's X-Sync-Time as the next `since`, as clients do. Every note must reach the puller,
 * including those whose transaction was in flight during a pull.
 */
describe('sync cursor with writers on 3 processes', {
  skip: !onPostgres && 'needs TEST_DATABASE_URL',
}, () => {
  it('a puller following X-Sync-Time sees every note written on any process', async () => {
    await withServerProcesses(PROCESSES, async (servers) => {
      const owner = await setupOwner(servers[0]!.url);
      /** The owner's session, on process `i` (sessions are rows: any process knows them). */
      const on = (i: number) => {
        const client = new TestClient(servers[i]!.url);
        for (const [name, value] of owner.cookies) client.cookies.set(name, value);
        return client;
      };
      const written = new Set<string>();
      let writing = true;
      const writers = servers.map(async (_, i) => {
        const client = on(i);
        for (let n = 0; n < NOTES_PER_WRITER; n++) {
          const created = await client.post('/api/notes', {
            title: `p${i} n${n}`,
            content: 'x'.repeat(2_000),
          });
          assert.equal(created.status, 201, created.text);
          written.add(created.body.id);
        }
      });
      const seen = new Set<string>();
      let since = 0;
      let pulls = 0;
      const pullOnce = async () => {
        const response = await on(pulls++ % PROCESSES).get(`/api/sync?since=${since}`);
        assert.equal(response.status, 200, response.text);
        for (const note of response.body) seen.add(note.id);
        since = Number(response.headers.get('x-sync-time'));
      };
      const puller = (async () => {
        while (writing) await pullOnce();
      })();
      await Promise.all(writers);
      writing = false;
      await puller;
      await pullOnce();
      const missed = [...written].filter((id) => !seen.has(id));
      assert.equal(written.size, PROCESSES * NOTES_PER_WRITER);
      assert.deepEqual(missed, [], `${missed.length} notes never reached the puller in ${pulls} pulls`);
    });
  });
});
