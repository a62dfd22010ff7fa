import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { findLoneSurrogate } from '../src/http/jsonBodies.js';
import type { TestResponse } from './helpers/client.js';
import { useOwner, useServer } from './helpers/server.js';

const LONE_HIGH = '\ud800';
const LONE_LOW = '\udfff';

/** A 400 validation_failed naming `path` as the one field at fault. */
function assertLoneSurrogateRefused(response: TestResponse, path: string): void {
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.code, 'validation_failed');
  assert.deepEqual(
    response.body.details.map((d: { path: string }) => d.path),
    [path],
  );
}

describe('findLoneSurrogate', () => {
  it('names the first string or key holding half a pair, and passes whole pairs', () => {
    assert.equal(findLoneSurrogate({ a: ['ok', `x${LONE_LOW}`] }), '/a/1');
    assert.equal(findLoneSurrogate({ [`k${LONE_HIGH}/~`]: 1 }), '/k\ufffd~1~0');
    assert.equal(findLoneSurrogate(`${LONE_LOW}${LONE_HIGH}`), '/');
    assert.equal(findLoneSurrogate({ emoji: '\ud83d\ude00', n: 1, t: true, z: null }), undefined);
  });

  it('walks a body nested deeper than the call stack', () => {
    let deep: unknown = LONE_HIGH;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    assert.equal(findLoneSurrogate(deep), `${'/0'.repeat(200_000)}`);
  });
});

describe('JSON bodies with lone surrogates', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('are refused on create and PATCH, naming the field, and nothing is stored', async () => {
    assertLoneSurrogateRefused(await owner.post('/api/notes', { title: LONE_HIGH.repeat(1_000) }), '/title');
    assertLoneSurrogateRefused(
      await owner.post('/api/notes', { content: `milk ${LONE_LOW} eggs` }),
      '/content',
    );
    const note = (await owner.post('/api/notes', { title: 'clean' })).body;
    assertLoneSurrogateRefused(
      await owner.patch(`/api/notes/${note.id}`, { title: `a${LONE_LOW}${LONE_HIGH}b` }),
      '/title',
    );
    // Unknown fields are ignored (D-NOTE-2), but not exempt: every string of the body counts.
    assertLoneSurrogateRefused(await owner.patch(`/api/notes/${note.id}`, { [LONE_HIGH]: 'x' }), '/\ufffd');
    const notes = (await owner.get('/api/notes')).body;
    assert.deepEqual(
      notes.map((n: { title: string }) => n.title),
      ['clean'],
    );
  });

  it('are refused in a sync push, naming the index, and nothing is applied', async () => {
    const changes = [
      { noteId: randomUUID(), operation: 'create', timestamp: 1, data: { title: 'fine' } },
      { noteId: randomUUID(), operation: 'create', timestamp: 2, data: { content: `x${LONE_HIGH}` } },
    ];
    assertLoneSurrogateRefused(await owner.post('/api/sync', { changes }), '/changes/1/data/content');
    assert.equal((await owner.get(`/api/notes/${changes[0]!.noteId}`)).status, 404);
  });

  it('are refused in MCP tool arguments before any tool runs', async () => {
    const key = (await owner.post('/api/settings/api-keys', { name: 'agent' })).body.key;
    const headers = { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream' };
    const initialized = await owner.post(
      '/api/mcp',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      },
      { headers },
    );
    assert.equal(initialized.status, 200, initialized.text);
    const session = { ...headers, 'mcp-session-id': initialized.headers.get('mcp-session-id')! };
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'create_note', arguments: { title: `agent ${LONE_LOW}` } },
    };
    assertLoneSurrogateRefused(
      await owner.post('/api/mcp', call, { headers: session }),
      '/params/arguments/title',
    );
    const titles = (await owner.get('/api/notes')).body.map((n: { title: string }) => n.title);
    assert.ok(!titles.some((t: string) => t.startsWith('agent')));
  });

  it('leave escaped surrogate pairs alone (emoji sent as \\ud83d\\ude00)', async () => {
    const response = await owner.request('POST', '/api/notes', {
      body: '{"title":"\\ud83d\\ude00 party"}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 201, response.text);
    assert.equal(response.body.title, '😀 party');
  });

  it('so that any note read back can be written back unchanged', async () => {
    // Any UTF-16 text (lone surrogates included) up to the title limit: refused, or stored so
    // that the note as received can be PATCHed back.
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 1_000 }), async (title) => {
        const created = await owner.post('/api/notes', { title });
        if (created.status === 400) {
          const unstorable = findLoneSurrogate(title) !== undefined || title.includes('\0');
          assert.ok(unstorable, 'only broken text and U+0000 are refused');
          return;
        }
        assert.equal(created.status, 201, created.text);
        const stored = (await owner.get(`/api/notes/${created.body.id}`)).body;
        assert.equal(stored.title, title);
        const back = await owner.patch(`/api/notes/${stored.id}`, stored);
        assert.equal(back.status, 200, back.text);
      }),
      { numRuns: 40, examples: [[LONE_HIGH.repeat(1_000)], [`${LONE_LOW}ok`]] },
    );
  });
});

describe('JSON bodies with U+0000 (docs/decisions/0015-postgresql.md)', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('are refused on both engines, naming the field, and nothing is stored', async () => {
    // PostgreSQL's text cannot hold U+0000; SQLite refuses it too, so that both answer alike.
    assertLoneSurrogateRefused(await owner.post('/api/notes', { content: 'a\u0000b' }), '/content');
    const changes = [{ noteId: randomUUID(), operation: 'create', timestamp: 1, data: { title: '\u0000' } }];
    assertLoneSurrogateRefused(await owner.post('/api/sync', { changes }), '/changes/0/data/title');
    assert.deepEqual((await owner.get('/api/notes')).body, []);
  });

  it('leaves the text "\\u0000" (an escaped backslash) alone', async () => {
    const created = await owner.post('/api/notes', { title: '\\u0000' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.title, '\\u0000');
  });
});
