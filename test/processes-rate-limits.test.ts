import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOGIN_RATE_LIMIT } from '../src/features/auth/routes.js';
import { SHARED_NOTE_RATE_LIMIT } from '../src/features/sharing/routes.js';
import { setupOwner, TestClient } from './helpers/client.js';
import { onPostgres } from './helpers/postgres.js';
import { withServerProcesses } from './helpers/server.js';

/**
 * Rate limits count the requests of every process sharing PostgreSQL (src/db/rateLimitStore.ts):
 * requests spread round-robin over 3 processes are refused at the same count as on one.
 */
describe('rate limits across 3 processes', { skip: !onPostgres && 'needs TEST_DATABASE_URL' }, () => {
  it('refuses the 61st public share request and the 11th login in a minute, whichever process gets it', async () => {
    await withServerProcesses(3, async (servers) => {
      const visitor = (n: number) => new TestClient(servers[n % servers.length]!.url);
      const owner = await setupOwner(servers[0]!.url);
      const note = (await owner.post('/api/notes', { title: 'public' })).body;
      const { token } = (await owner.post(`/api/notes/${note.id}/share`)).body;
      for (let n = 0; n < SHARED_NOTE_RATE_LIMIT; n++) {
        assert.equal((await visitor(n).get(`/api/shared/${token}`)).status, 200, `request ${n + 1}`);
      }
      const refused = await visitor(SHARED_NOTE_RATE_LIMIT).get(`/api/shared/${token}`);
      assert.equal(refused.status, 429);
      assert.equal(refused.body.code, 'rate_limited');

      for (let n = 0; n < LOGIN_RATE_LIMIT; n++) {
        assert.equal((await visitor(n).post('/api/auth/login', { password: 'wrong password' })).status, 401);
      }
      assert.equal(
        (await visitor(LOGIN_RATE_LIMIT).post('/api/auth/login', { password: 'wrong password' })).status,
        429,
      );
    });
  });
});
