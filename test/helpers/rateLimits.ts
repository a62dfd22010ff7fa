import assert from 'node:assert/strict';
import { LOGIN_RATE_LIMIT } from '../../src/features/auth/routes.js';
import { SHARED_ATTACHMENT_RATE_LIMIT, SHARED_NOTE_RATE_LIMIT } from '../../src/features/sharing/routes.js';
import { attach, image } from './archives.js';
import { TestClient } from './client.js';
import type { ServerProcess } from './server.js';

/**
 * Requests spread round-robin over the processes are refused at the same count as on one: the
 * 61st public share request, the 301st shared attachment download and the 11th login in a
 * minute, whichever process gets it. The two share limiters count apart. `owner` is signed in
 * on one of them; the test's client has made no other such requests in the last minute.
 */
export async function assertLimitsHold(servers: ServerProcess[], owner: TestClient) {
  const visitor = (n: number) => new TestClient(servers[n % servers.length]!.url);
  const note = (await owner.post('/api/notes', { title: 'public' })).body;
  const attachment = (await attach(owner, note.id, await image(1))).body;
  const { token } = (await owner.post(`/api/notes/${note.id}/share`)).body;
  const limits = [
    { path: `/api/shared/${token}`, max: SHARED_NOTE_RATE_LIMIT },
    { path: `/api/shared/${token}/attachment/${attachment.id}`, max: SHARED_ATTACHMENT_RATE_LIMIT },
  ];
  for (const { path, max } of limits) {
    for (let n = 0; n < max; n++) {
      assert.equal((await visitor(n).get(path)).status, 200, `${path}: request ${n + 1}`);
    }
    const refused = await visitor(max).get(path);
    assert.equal(refused.status, 429, path);
    assert.equal(refused.body.code, 'rate_limited');
  }

  for (let n = 0; n < LOGIN_RATE_LIMIT; n++) {
    assert.equal((await visitor(n).post('/api/auth/login', { password: 'wrong password' })).status, 401);
  }
  assert.equal(
    (await visitor(LOGIN_RATE_LIMIT).post('/api/auth/login', { password: 'wrong password' })).status,
    429,
  );
}
