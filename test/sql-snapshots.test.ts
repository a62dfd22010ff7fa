/**
 * The SQL behind a fixed script of API calls, compared with test/snapshots/api-queries.sql, so a
 * change to a store's query shape (an extra query, a lost index condition, N+1) shows in review
 * as a diff of that file. After an intended change, regenerate and commit it:
 * `UPDATE_SQL_SNAPSHOTS=1 node --import tsx --test test/sql-snapshots.test.ts`.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { clientOf, OWNER_PASSWORD, type TestResponse } from './helpers/client.js';
import { sqliteOnly } from './helpers/postgres.js';
import { isBackgroundQuery, ManualClock, useServer } from './helpers/server.js';

/** From the repository root, where tests run, compiled (npm test) or not. */
const SNAPSHOT_FILE = path.resolve('test/snapshots/api-queries.sql');

describe('SQL per API call (test/snapshots/api-queries.sql)', sqliteOnly, () => {
  let recording: string[] | undefined;
  const sections: string[] = [];
  const server = useServer({
    clock: new ManualClock(),
    onQuery: (sql) => isBackgroundQuery(sql) || recording?.push(sql),
  });

  /** Runs one call and records the statements it ran under its label. */
  async function step(label: string, call: () => Promise<TestResponse>): Promise<TestResponse> {
    recording = [];
    const response = await call();
    const statements = recording;
    recording = undefined;
    assert.ok(response.status < 400, `${label}: ${response.status} ${response.text}`);
    sections.push([`-- ${label}`, ...statements.map((sql) => `${sql};`)].join('\n'));
    return response;
  }

  it('runs the statements in the snapshot, call by call', async () => {
    const owner = clientOf(server);
    await step('POST /api/auth/setup', () => owner.post('/api/auth/setup', { password: OWNER_PASSWORD }));
    await step('POST /api/users', () =>
      owner.post('/api/users', { email: 'friend@example.com', displayName: 'Friend', password: 'secret12' }),
    );
    const friend = clientOf(server);
    await step('POST /api/auth/login', () =>
      friend.post('/api/auth/login', { email: 'friend@example.com', password: 'secret12' }),
    );
    const friendId = (await owner.get('/api/users')).body.find(
      (u: any) => u.email === 'friend@example.com',
    ).id;
    const note = (
      await step('POST /api/notes', () =>
        owner.post('/api/notes', { title: 'Plans #work', content: '- [ ] call #home' }),
      )
    ).body;
    await step('GET /api/notes/{id}', () => owner.get(`/api/notes/${note.id}`));
    await step('PATCH /api/notes/{id}', () =>
      owner.patch(`/api/notes/${note.id}`, { content: 'done #work' }),
    );
    // The same hashtags: the tags are neither read nor written.
    await step('PATCH /api/notes/{id} (title, the same hashtags)', () =>
      owner.patch(`/api/notes/${note.id}`, { title: 'Plans for #work' }),
    );
    await step('GET /api/notes', () => owner.get('/api/notes'));
    await step('GET /api/search', () => owner.get('/api/search?q=plans'));
    await step('GET /api/tags', () => owner.get('/api/tags'));
    await step('POST /api/notes/{id}/collaborators', () =>
      owner.post(`/api/notes/${note.id}/collaborators`, { userId: friendId }),
    );
    await step('GET /api/notes (as a collaborator)', () => friend.get('/api/notes'));
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#3a7' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('file', new Blob([png], { type: 'image/png' }), 'dot.png');
    await step('POST /api/notes/{id}/attachments', () =>
      owner.request('POST', `/api/notes/${note.id}/attachments`, { body: form }),
    );
    const share = (await step('POST /api/notes/{id}/share', () => owner.post(`/api/notes/${note.id}/share`)))
      .body;
    const token = new URL(share.url).pathname.split('/').pop()!;
    await step('GET /api/shared/{token}', () => clientOf(server).get(`/api/shared/${token}`));
    await step('POST /api/sync', () =>
      owner.post('/api/sync', {
        changes: [
          { noteId: randomUUID(), operation: 'create', timestamp: 1, data: { title: 'pushed #sync' } },
          { noteId: note.id, operation: 'update', timestamp: 2, data: { pinned: true } },
        ],
      }),
    );
    await step('GET /api/sync', () => owner.get('/api/sync?since=0'));
    await step('GET /api/sync/deleted', () => owner.get('/api/sync/deleted?since=0'));
    const key = (
      await step('POST /api/settings/api-keys', () => owner.post('/api/settings/api-keys', { name: 'cli' }))
    ).body.key;
    await step('GET /api/notes (with an API key)', () =>
      clientOf(server).get('/api/notes', { headers: { authorization: `Bearer ${key}` } }),
    );
    await step('DELETE /api/notes/{id}', () => owner.delete(`/api/notes/${note.id}`));
    await step('DELETE /api/users/{id}', () => owner.delete(`/api/users/${friendId}`));

    const actual = `${sections.join('\n\n')}\n`;
    if (process.env.UPDATE_SQL_SNAPSHOTS) fs.writeFileSync(SNAPSHOT_FILE, actual);
    const expected = fs.existsSync(SNAPSHOT_FILE) ? fs.readFileSync(SNAPSHOT_FILE, 'utf8') : '';
    // Line by line, so a failure shows which statements differ.
    assert.deepEqual(
      actual.split('\n'),
      expected.split('\n'),
      'the SQL changed: if that is intended, run with UPDATE_SQL_SNAPSHOTS=1 and commit the file',
    );
  });
});
