import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setupOwner } from './helpers/client.js';
import { onPostgres } from './helpers/postgres.js';
import { ManualClock, startServer, type TestServer, tempDataDir } from './helpers/server.js';

const DAY = 24 * 60 * 60 * 1000;

/**
 * The hourly maintenance (trash purge and clean-ups) runs on one of the servers sharing a
 * PostgreSQL database (docs/decisions/0022-several-processes.md): three server instances, each
 * with its own connection pool and a hand-moved clock, asked to run it at the same moment.
 */
describe('maintenance across 3 servers on one database', {
  skip: !onPostgres && 'needs TEST_DATABASE_URL',
}, () => {
  it('purges the expired trash once, on one server, and another takes over when it stops', async () => {
    const dataDir = tempDataDir();
    const clock = new ManualClock();
    const servers: TestServer[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        servers.push(await startServer({ dataDir, clock, env: { TRASH_RETENTION_DAYS: '30' } }));
      }
      const owner = await setupOwner(servers[0]!.url);
      const trashed: string[] = [];
      for (let n = 0; n < 3; n++) {
        trashed.push((await owner.post('/api/notes', { title: `old ${n}`, trashed: true })).body.id);
      }
      clock.advance(31 * DAY);

      const runs = await Promise.all(servers.map((server) => server.app.runMaintenance()));
      const leaders = runs.flatMap((run, i) => (run === null ? [] : [i]));
      assert.equal(leaders.length, 1, `maintenance ran on servers ${leaders.join(', ')}`);
      assert.deepEqual(runs[leaders[0]!], { purged: 3 });
      const left = await servers[0]!.app.db
        .selectFrom('notes')
        .select('id')
        .where('id', 'in', trashed)
        .execute();
      assert.deepEqual(left, []);

      const [leader] = servers.splice(leaders[0]!, 1);
      await leader!.close({ keepData: true });
      const after = await Promise.all(servers.map((server) => server.app.runMaintenance()));
      assert.equal(after.filter((run) => run !== null).length, 1, 'one of the other two took over');
    } finally {
      // The last one drops the database and DATA_DIR.
      for (const [i, server] of servers.entries()) await server.close({ keepData: i < servers.length - 1 });
    }
  });
});
