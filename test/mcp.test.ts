import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  appendText,
  checklistItems,
  pickChecklistItem,
  setItemChecked,
} from '../src/features/notes/contentEdits.js';
import { createApiKey, createUserClient, setupOwner, type TestClient } from './helpers/client.js';
import { startServer, type TestServer } from './helpers/server.js';

const READ_TOOLS = [
  'get_note',
  'list_note_revisions',
  'list_notes',
  'list_reminders',
  'list_tags',
  'search_notes',
];
const WRITE_TOOLS = [
  'append_to_note',
  'archive_note',
  'clear_reminder',
  'create_note',
  'delete_note',
  'restore_note',
  'set_checklist_item',
  'set_reminder',
  'trash_note',
  'update_note',
];
const MISSING_ID = '00000000-0000-4000-8000-000000000000';
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const LIST_TOOLS = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

/** The SDK's own client over a real socket, sending the key as a Bearer header. */
async function connect(baseUrl: string, key: string, sessionId?: string) {
  const transport = new StreamableHTTPClientTransport(new URL('/api/mcp', baseUrl), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    sessionId,
  });
  const client = new Client({ name: 'notes-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** A raw POST /api/mcp, for the status codes a client library would hide. */
function rawPost(baseUrl: string, key: string | null, body: unknown, headers: Record<string, string> = {}) {
  return fetch(new URL('/api/mcp', baseUrl), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

async function openRawSession(baseUrl: string, key: string): Promise<string> {
  const response = await rawPost(baseUrl, key, INITIALIZE);
  assert.equal(response.status, 200);
  return response.headers.get('mcp-session-id')!;
}

type Structured = Record<string, any>;
const readJson = (response: Response): Promise<any> => response.json();

describe('POST /api/mcp tools (D-MCP-3)', () => {
  let server: TestServer;
  let owner: TestClient;
  let client: Client;

  /** Calls a tool that must succeed and returns its structuredContent. */
  async function call(name: string, args: Record<string, unknown> = {}): Promise<Structured> {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    assert.ok(!result.isError, `${name} failed: ${JSON.stringify(result.content)}`);
    assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), result.structuredContent);
    return result.structuredContent as Structured;
  }

  /** Calls a tool that must fail as a tool result (not a protocol error); returns the message. */
  async function callFailing(name: string, args: Record<string, unknown>): Promise<string> {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    assert.equal(result.isError, true, `${name} should fail: ${JSON.stringify(result)}`);
    return (result.content[0] as { text: string }).text;
  }

  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
    ({ client } = await connect(server.url, (await createApiKey(owner)).key));
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('lists every tool with a description, input and output schemas and annotations', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [...READ_TOOLS, ...WRITE_TOOLS].sort());
    for (const tool of tools) {
      assert.ok((tool.description ?? '').length > 30, tool.name);
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
      assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean', tool.name);
      assert.equal(tool.annotations?.readOnlyHint, READ_TOOLS.includes(tool.name), tool.name);
      if (!tool.annotations?.readOnlyHint) {
        assert.equal(typeof tool.annotations?.destructiveHint, 'boolean', tool.name);
        assert.equal(typeof tool.annotations?.idempotentHint, 'boolean', tool.name);
      }
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.deepEqual(byName.get('get_note')!.inputSchema.required, ['id']);
    assert.deepEqual(byName.get('search_notes')!.inputSchema.required, ['query']);
    assert.deepEqual(Object.keys(byName.get('list_notes')!.inputSchema.properties ?? {}).sort(), [
      'color',
      'cursor',
      'filter',
      'limit',
      'pinned',
      'tag',
    ]);
    assert.equal(byName.get('delete_note')!.annotations?.destructiveHint, true);
    assert.deepEqual(byName.get('get_note')!.outputSchema?.required, ['note']);
  });

  it('describes every input field of every tool and says no other argument is accepted', async () => {
    for (const tool of (await client.listTools()).tools) {
      assert.equal(tool.inputSchema.additionalProperties, false, tool.name);
      for (const [field, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        const description = (schema as { description?: string }).description ?? '';
        assert.ok(description.length > 10, `${tool.name}.${field} has no description`);
      }
    }
  });

  it('refuses an unknown argument with a tool error naming it, for every tool (D-MCP-3)', async () => {
    const { tools } = await client.listTools();
    for (const tool of tools) {
      const message = await callFailing(tool.name, { unexpected: true });
      assert.match(message, /unrecognized key.*unexpected/i, tool.name);
    }
    // A misspelt guard must not become an unguarded overwrite.
    const { id } = (await owner.post('/api/notes', { content: 'keep me' })).body;
    const message = await callFailing('update_note', { id, content: 'overwritten', expectedversion: 7 });
    assert.match(message, /expectedversion/);
    assert.equal((await owner.get(`/api/notes/${id}`)).body.content, 'keep me');
  });

  it('create_note creates a note that REST then shows, tags from hashtags included', async () => {
    const { note } = await call('create_note', { title: 'Trip', content: 'Pack #travel', color: 'mint' });
    const rest = await owner.get(`/api/notes/${note.id}`);
    assert.equal(rest.status, 200);
    assert.deepEqual(rest.body, note);
    assert.deepEqual(rest.body.tags, ['travel']);
  });

  it('get_note returns the note as REST does; a missing note is a tool error (isError)', async () => {
    const created = (await owner.post('/api/notes', { title: 'Read me' })).body;
    assert.deepEqual((await call('get_note', { id: created.id })).note, created);
    assert.match(await callFailing('get_note', { id: MISSING_ID }), /not found/i);
  });

  it("refuses bad arguments with a tool error naming the problem, and does not touch another user's note", async () => {
    assert.match(await callFailing('get_note', { id: 'not-a-uuid' }), /id/);
    assert.match(await callFailing('create_note', { color: 'ultraviolet' }), /color/);
    assert.match(await callFailing('list_notes', { limit: 0 }), /limit/);
    const { client: stranger } = await createUserClient(server, 'stranger@example.com');
    const theirs = (await stranger.post('/api/notes', { title: 'Private' })).body;
    assert.match(await callFailing('get_note', { id: theirs.id }), /not found/i);
    assert.match(await callFailing('update_note', { id: theirs.id, title: 'Mine now' }), /not found/i);
    assert.equal((await stranger.get(`/api/notes/${theirs.id}`)).body.title, 'Private');
  });

  it('update_note changes only the given fields; expectedVersion guards against lost updates', async () => {
    const created = (await owner.post('/api/notes', { title: 'Draft', content: 'body' })).body;
    const { note } = await call('update_note', { id: created.id, title: 'Final', pinned: true });
    assert.equal(note.version, 2);
    const rest = (await owner.get(`/api/notes/${created.id}`)).body;
    assert.deepEqual([rest.title, rest.content, rest.pinned], ['Final', 'body', true]);
    assert.match(
      await callFailing('update_note', { id: created.id, title: 'Stale', expectedVersion: 1 }),
      /version/,
    );
    assert.equal((await owner.get(`/api/notes/${created.id}`)).body.title, 'Final');
    assert.match(await callFailing('update_note', { id: MISSING_ID, title: 'x' }), /not found/i);
  });

  it('set_reminder, list_reminders and clear_reminder act on the key user’s own reminder', async () => {
    const created = (await call('create_note', { title: 'Call mum' })).note;
    assert.equal(created.reminder, null);
    const set = await call('set_reminder', {
      noteId: created.id,
      at: '2030-04-02T18:00:00+02:00',
      repeat: 'weekly',
      timeZone: 'Europe/Berlin',
    });
    assert.deepEqual(set.reminder, {
      at: '2030-04-02T16:00:00.000Z',
      repeat: 'weekly',
      timeZone: 'Europe/Berlin',
      nextAt: '2030-04-02T16:00:00.000Z',
    });
    assert.deepEqual((await owner.get(`/api/notes/${created.id}`)).body.reminder, set.reminder);
    assert.deepEqual((await call('get_note', { id: created.id })).note.reminder, set.reminder);
    const { reminders } = await call('list_reminders');
    assert.deepEqual(
      reminders.map((r: { noteId: string; title: string }) => [r.noteId, r.title]),
      [[created.id, 'Call mum']],
    );
    assert.match(
      await callFailing('set_reminder', {
        noteId: created.id,
        at: '2030-04-02T18:00:00+02:00',
        timeZone: 'Mars/Base',
      }),
      /time zone/i,
    );
    assert.match(
      await callFailing('set_reminder', { noteId: MISSING_ID, at: '2030-04-02T18:00:00Z' }),
      /not found/i,
    );
    await call('clear_reminder', { noteId: created.id });
    assert.deepEqual((await call('list_reminders')).reminders, []);
    assert.equal((await owner.get(`/api/notes/${created.id}`)).body.reminder, null);
  });

  it('append_to_note adds text on a new line and keeps the rest', async () => {
    const created = (await owner.post('/api/notes', { content: 'line one' })).body;
    await call('append_to_note', { id: created.id, text: 'line two #added' });
    const rest = (await owner.get(`/api/notes/${created.id}`)).body;
    assert.equal(rest.content, 'line one\nline two #added');
    assert.deepEqual(rest.tags, ['added']);
    const revisions = (await call('list_note_revisions', { id: created.id })).revisions;
    assert.deepEqual(
      revisions.map((r: { version: number; content: string }) => [r.version, r.content]),
      [
        [2, 'line one\nline two #added'],
        [1, 'line one'],
      ],
    ); // D-SYNC-9: an MCP edit records a revision like any other
    const empty = (await owner.post('/api/notes', {})).body;
    await call('append_to_note', { id: empty.id, text: 'first' });
    assert.equal((await owner.get(`/api/notes/${empty.id}`)).body.content, 'first');
    assert.match(await callFailing('append_to_note', { id: MISSING_ID, text: 'x' }), /not found/i);
  });

  it('set_checklist_item checks and unchecks one item by index or text, leaving the rest as written (D-NOTE-6)', async () => {
    const content = 'Shopping\n- [ ] milk\n* [x] Bread\n```\n- [ ] not an item\n```\n- [ ] eggs';
    const created = (await owner.post('/api/notes', { checklistMode: true, content })).body;
    const first = await call('set_checklist_item', { id: created.id, index: 0, checked: true });
    assert.deepEqual(first.item, { index: 0, text: 'milk', checked: true });
    await call('set_checklist_item', { id: created.id, text: 'bread', checked: false });
    await call('set_checklist_item', { id: created.id, text: 'EGG', checked: true });
    const rest = (await owner.get(`/api/notes/${created.id}`)).body;
    assert.equal(rest.content, 'Shopping\n- [x] milk\n* [ ] Bread\n```\n- [ ] not an item\n```\n- [x] eggs');
    const again = await call('set_checklist_item', { id: created.id, index: 0, checked: true });
    assert.equal(again.note.version, rest.version, 'checking a checked item changes nothing');
    assert.match(
      await callFailing('set_checklist_item', { id: created.id, text: 'butter', checked: true }),
      /milk/,
    );
    assert.match(
      await callFailing('set_checklist_item', { id: created.id, index: 3, checked: true }),
      /eggs/,
    );
    assert.match(await callFailing('set_checklist_item', { id: created.id, checked: true }), /index or text/);
    const plain = (await owner.post('/api/notes', { content: 'no items' })).body;
    assert.match(
      await callFailing('set_checklist_item', { id: plain.id, index: 0, checked: true }),
      /no checklist/,
    );
  });

  it('archive_note, trash_note and restore_note move a note between the lists', async () => {
    const { id } = (await owner.post('/api/notes', { title: 'Mover' })).body;
    const inList = async (filter: string) =>
      (await owner.get(`/api/notes?filter=${filter}`)).body.some((n: { id: string }) => n.id === id);
    await call('archive_note', { id });
    assert.ok(await inList('archived'));
    await call('restore_note', { id });
    assert.ok(await inList('all'));
    const trashed = await call('trash_note', { id });
    assert.ok(trashed.note.trashedAt);
    assert.ok(await inList('trashed'));
    await call('restore_note', { id });
    const rest = (await owner.get(`/api/notes/${id}`)).body;
    assert.deepEqual([rest.archived, rest.trashed, rest.trashedAt], [false, false, null]);
    assert.match(await callFailing('trash_note', { id: MISSING_ID }), /not found/i);
  });

  it('delete_note refuses a note that is not in the trash and deletes a trashed one for good', async () => {
    const { id } = (await owner.post('/api/notes', { title: 'Doomed' })).body;
    assert.match(await callFailing('delete_note', { id }), /trash/);
    assert.equal((await owner.get(`/api/notes/${id}`)).status, 200);
    await call('trash_note', { id });
    assert.deepEqual(await call('delete_note', { id }), { deleted: true, id });
    assert.equal((await owner.get(`/api/notes/${id}`)).status, 404);
    assert.match(await callFailing('delete_note', { id }), /not found/i);
  });

  it('list_notes narrows by filter, tag, color and pinned and honours limit', async () => {
    const a = (await owner.post('/api/notes', { title: 'List A #listing', color: 'coral', pinned: true }))
      .body;
    const b = (await owner.post('/api/notes', { title: 'List B #listing', color: 'sand' })).body;
    const ids = async (args: Record<string, unknown>) =>
      (await call('list_notes', args)).notes.map((n: { id: string }) => n.id);
    assert.deepEqual(await ids({ tag: 'listing' }), [a.id, b.id]);
    assert.deepEqual(await ids({ tag: 'listing', color: 'sand' }), [b.id]);
    assert.deepEqual(await ids({ tag: 'listing', pinned: false }), [b.id]);
    assert.deepEqual(await ids({ tag: 'listing', limit: 1 }), [a.id]);
    assert.deepEqual(await ids({ tag: 'listing', filter: 'archived' }), []);
    const [summary] = (await call('list_notes', { tag: 'listing', limit: 1 })).notes;
    assert.deepEqual(Object.keys(summary).sort(), [
      'archived',
      'checklistMode',
      'color',
      'excerpt',
      'id',
      'pinned',
      'tags',
      'title',
      'trashed',
      'updatedAt',
      'version',
    ]);
  });

  it('list_notes pages with nextCursor through the REST order, unshaken by notes added meanwhile', async () => {
    for (const n of [1, 2, 3, 4, 5])
      await owner.post('/api/notes', { title: `Paged ${n} #paging`, sortOrder: n % 2 });
    const restOrder = (await owner.get('/api/notes?tag=paging')).body.map((n: { id: string }) => n.id);
    const seen: string[] = [];
    let page = await call('list_notes', { tag: 'paging', limit: 2 });
    for (let pages = 1; ; pages++) {
      seen.push(...page.notes.map((n: { id: string }) => n.id));
      if (pages === 1) await owner.post('/api/notes', { title: 'Added meanwhile #paging', pinned: true });
      if (page.nextCursor === null) break;
      assert.equal(page.notes.length, 2);
      page = await call('list_notes', { tag: 'paging', limit: 2, cursor: page.nextCursor });
    }
    assert.deepEqual(seen, restOrder, 'every note once, in display order');
    const last = await call('list_notes', { tag: 'paging', limit: 6 });
    assert.equal(last.notes.length, 6);
    assert.equal(last.nextCursor, null);
    for (const cursor of ['not-a-cursor', Buffer.from('[1,2]').toString('base64url')]) {
      assert.match(await callFailing('list_notes', { cursor }), /invalid_cursor/);
    }
  });

  it('search_notes finds what REST search finds, with short excerpts', async () => {
    const long = `zebra ${'x'.repeat(1_000)}`;
    const created = (await owner.post('/api/notes', { title: 'Stripes', content: long })).body;
    const { notes } = await call('search_notes', { query: 'zebr' });
    const rest = (await owner.get('/api/search?q=zebr')).body;
    assert.deepEqual(
      notes.map((n: { id: string }) => n.id),
      rest.map((n: { id: string }) => n.id),
    );
    assert.equal(notes[0].id, created.id);
    assert.ok(notes[0].excerpt.length < 300);
    assert.match(await callFailing('search_notes', { query: '' }), /query/);
  });

  it('list_tags lists the tags REST lists', async () => {
    const { tags } = await call('list_tags');
    assert.deepEqual(tags, (await owner.get('/api/tags')).body);
    assert.ok(tags.some((t: { name: string }) => t.name === 'travel'));
  });

  it('serves notes as note://{id} resources', async () => {
    const created = (await owner.post('/api/notes', { title: 'As resource', content: 'Hello #res' })).body;
    const read = await client.readResource({ uri: `note://${created.id}` });
    assert.deepEqual(read.contents, [
      {
        uri: `note://${created.id}`,
        mimeType: 'text/markdown',
        text: '# As resource\n\nHello #res\n\nTags: #res',
      },
    ]);
    const { resources } = await client.listResources();
    assert.ok(resources.some((r) => r.uri === `note://${created.id}`));
    await assert.rejects(client.readResource({ uri: `note://${MISSING_ID}` }), /not found/i);
  });
});

describe('POST /api/mcp sessions and authentication (D-MCP-1, D-MCP-2)', () => {
  let server: TestServer;
  let owner: TestClient;
  let key: string;
  let keyId: string;
  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
    ({ key, id: keyId } = await createApiKey(owner));
  });
  after(() => server.close());

  async function createRevokedKey() {
    const revoked = await createApiKey(owner);
    assert.equal((await owner.delete(`/api/settings/api-keys/${revoked.id}`)).status, 200);
    return revoked;
  }

  it('initialize opens a session stored in the database, bound to the key', async () => {
    const response = await rawPost(server.url, key, INITIALIZE);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    const body = await readJson(response);
    assert.equal(body.id, 1);
    assert.equal(body.result.serverInfo.name, 'notes');
    const sessionId = response.headers.get('mcp-session-id')!;
    assert.match(sessionId, /^[0-9a-f-]{36}$/);
    const row = await server.app.db
      .selectFrom('mcp_sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .executeTakeFirst();
    assert.equal(row?.key_id, keyId);
  });

  it('answers 401 with WWW-Authenticate: Bearer for a missing, malformed, unknown or revoked key', async () => {
    const revoked = await createRevokedKey();
    for (const candidate of [null, 'nsk_short', `nsk_${'A'.repeat(43)}`, revoked.key]) {
      const response = await rawPost(server.url, candidate, INITIALIZE);
      assert.equal(response.status, 401, String(candidate));
      assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      assert.equal((await readJson(response)).code, 'unauthenticated');
    }
    const cookieOnly = await owner.request('POST', '/api/mcp', {
      json: INITIALIZE,
      headers: { accept: 'application/json, text/event-stream' },
    });
    assert.equal(cookieOnly.status, 401, 'a session cookie is not an API key');
  });

  it('the SDK client gets 401 for a wrong key', async () => {
    await assert.rejects(connect(server.url, `nsk_${'B'.repeat(43)}`), /401|Unauthorized/i);
  });

  it('a client that answers 401 with OAuth (as mcp-remote does) ends on a message about API keys', async () => {
    // The SDK's own OAuth flow, which mcp-remote runs on any 401: discovery, then registration.
    const redirectUrl = 'http://127.0.0.1:9/callback';
    const authProvider: OAuthClientProvider = {
      redirectUrl,
      clientMetadata: { redirect_uris: [redirectUrl], client_name: 'oauth-first client' },
      clientInformation: () => undefined,
      saveClientInformation: () => {},
      tokens: () => undefined,
      saveTokens: () => {},
      redirectToAuthorization: () => assert.fail('there is no OAuth sign-in to send the user to'),
      saveCodeVerifier: () => {},
      codeVerifier: () => '',
    };
    for (const wrongKey of [`nsk_${'C'.repeat(43)}`, (await createRevokedKey()).key]) {
      const transport = new StreamableHTTPClientTransport(new URL('/api/mcp', server.url), {
        authProvider,
        requestInit: { headers: { authorization: `Bearer ${wrongKey}` } },
      });
      await assert.rejects(
        new Client({ name: 'oauth-first', version: '1' }).connect(transport),
        (err: Error) => {
          assert.match(
            err.message,
            /does not use OAuth.*Authorization: Bearer nsk_.*missing, wrong or revoked/,
          );
          return true;
        },
      );
    }
    const registration = await fetch(new URL('/register', server.url), { method: 'POST' });
    assert.equal(registration.status, 404);
    assert.equal((await readJson(registration)).code, 'oauth_not_supported');
  });

  it('answers 400 with a JSON-RPC error when the session id is missing or malformed', async () => {
    for (const headers of [{}, { 'mcp-session-id': 'not a session' }] as Record<string, string>[]) {
      const response = await rawPost(server.url, key, LIST_TOOLS, headers);
      assert.equal(response.status, 400);
      const body = await readJson(response);
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.id, null);
      assert.equal(typeof body.error.code, 'number');
      assert.match(body.error.message, /Mcp-Session-Id/);
    }
  });

  it("answers 404 for an unknown, expired or another key's session id", async () => {
    const unknown = await rawPost(server.url, key, LIST_TOOLS, { 'mcp-session-id': MISSING_ID });
    assert.equal(unknown.status, 404);
    assert.equal((await readJson(unknown)).error.code, -32001);

    const other = await createApiKey(owner);
    const othersSession = await openRawSession(server.url, other.key);
    const stolen = await rawPost(server.url, key, LIST_TOOLS, { 'mcp-session-id': othersSession });
    assert.equal(stolen.status, 404);

    const sessionId = await openRawSession(server.url, key);
    const ok = await rawPost(server.url, key, LIST_TOOLS, { 'mcp-session-id': sessionId });
    assert.equal(ok.status, 200);
    assert.ok((await readJson(ok)).result.tools.length > 0);
    await server.app.db
      .updateTable('mcp_sessions')
      .set({ last_used_at: Date.now() - 24 * 60 * 60 * 1000 - 1 })
      .where('id', '=', sessionId)
      .execute();
    const expired = await rawPost(server.url, key, LIST_TOOLS, { 'mcp-session-id': sessionId });
    assert.equal(expired.status, 404);
  });

  it('revoking the key ends its sessions at once', async () => {
    const doomed = await createApiKey(owner);
    const { client } = await connect(server.url, doomed.key);
    assert.ok((await client.listTools()).tools.length > 0);
    await owner.delete(`/api/settings/api-keys/${doomed.id}`);
    await assert.rejects(client.listTools(), /401|Unauthorized/i);
    await client.close();
  });

  it('GET answers 405 unless it is a session asking for its event stream (D-MCP-1, decision 0045)', async () => {
    const response = await fetch(new URL('/api/mcp', server.url), {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    });
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'POST, DELETE');
  });

  it('DELETE with the session id ends the session', async () => {
    const { client, transport } = await connect(server.url, key);
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    const after = await rawPost(server.url, key, LIST_TOOLS, { 'mcp-session-id': sessionId });
    assert.equal(after.status, 404);
    await client.close();
    const missing = await fetch(new URL('/api/mcp', server.url), {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(missing.status, 400);
  });

  it('answers broken JSON, non-JSON-RPC bodies and other media types with a 4xx, never a 500 (D-ERR-3)', async () => {
    for (const [body, contentType, status] of [
      ['{broken', 'application/json', 400],
      ['{}', 'application/json', 400],
      ['"text"', 'application/json', 400],
      ['<x/>', 'application/xml', 415],
    ] as const) {
      const response = await fetch(new URL('/api/mcp', server.url), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': contentType,
          accept: 'application/json, text/event-stream',
        },
        body,
      });
      assert.equal(response.status, status, body);
      assert.equal(typeof (await readJson(response)).code, 'string', body);
    }
    const notAccepting = await rawPost(server.url, key, INITIALIZE, { accept: 'application/json' });
    assert.equal(notAccepting.status, 406);
  });

  it('answers notifications with 202 and rejects an unsupported protocol version header with 400', async () => {
    const sessionId = await openRawSession(server.url, key);
    const notification = await rawPost(
      server.url,
      key,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { 'mcp-session-id': sessionId },
    );
    assert.equal(notification.status, 202);
    const badVersion = await rawPost(server.url, key, LIST_TOOLS, {
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '1999-01-01',
    });
    assert.equal(badVersion.status, 400);
  });
});

describe('POST /api/mcp across a restart (D-MCP-2)', () => {
  it('keeps working with the same session id after the server restarts on the same data', async () => {
    const first = await startServer();
    const owner = await setupOwner(first);
    const { key } = await createApiKey(owner);
    const before = await connect(first.url, key);
    const sessionId = before.transport.sessionId!;
    const { structuredContent } = (await before.client.callTool({
      name: 'create_note',
      arguments: { title: 'Survives' },
    })) as CallToolResult;
    await before.client.close();
    await first.close({ keepData: true });

    const second = await startServer({ dataDir: first.dataDir });
    try {
      const after = await connect(second.url, key, sessionId);
      assert.equal(after.transport.sessionId, sessionId);
      const result = (await after.client.callTool({
        name: 'get_note',
        arguments: { id: (structuredContent as Structured).note.id },
      })) as CallToolResult;
      assert.equal(result.isError, undefined);
      assert.equal((result.structuredContent as Structured).note.title, 'Survives');
      await after.client.close();
    } finally {
      await second.close();
    }
  });
});

describe('POST /api/mcp with a read-only key (D-KEY-3)', () => {
  let server: TestServer;
  let owner: TestClient;
  let client: Client;
  let noteId: string;
  before(async () => {
    server = await startServer();
    owner = await setupOwner(server);
    noteId = (await owner.post('/api/notes', { title: 'Visible', content: 'read me #shared' })).body.id;
    ({ client } = await connect(server.url, (await createApiKey(owner, ['notes:read'])).key));
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('is offered only the read tools', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), READ_TOOLS);
  });

  it('lists, gets and searches notes', async () => {
    const listed = (await client.callTool({ name: 'list_notes', arguments: {} })) as CallToolResult;
    assert.deepEqual(
      (listed.structuredContent as Structured).notes.map((n: { id: string }) => n.id),
      [noteId],
    );
    const found = (await client.callTool({
      name: 'search_notes',
      arguments: { query: 'read' },
    })) as CallToolResult;
    assert.equal((found.structuredContent as Structured).notes[0].id, noteId);
    const got = (await client.callTool({ name: 'get_note', arguments: { id: noteId } })) as CallToolResult;
    assert.equal((got.structuredContent as Structured).note.title, 'Visible');
  });

  it('lists the revisions of a note, newest first, with list_note_revisions (D-SYNC-9)', async () => {
    await owner.patch(`/api/notes/${noteId}`, { content: 'read me again #shared' });
    const listed = (await client.callTool({
      name: 'list_note_revisions',
      arguments: { id: noteId },
    })) as CallToolResult;
    assert.equal(listed.isError, undefined);
    const { revisions } = listed.structuredContent as Structured;
    assert.deepEqual(
      revisions.map((r: { version: number; content: string }) => [r.version, r.content]),
      [
        [2, 'read me again #shared'],
        [1, 'read me #shared'],
      ],
    );
    const missing = (await client.callTool({
      name: 'list_note_revisions',
      arguments: { id: MISSING_ID },
    })) as CallToolResult;
    assert.equal(missing.isError, true);
    const tool = (await client.listTools()).tools.find((t) => t.name === 'list_note_revisions');
    assert.equal(tool?.annotations?.readOnlyHint, true);
  });

  it('cannot call a write tool, and nothing changes', async () => {
    const before = (await owner.get(`/api/notes/${noteId}`)).body;
    for (const [name, args] of [
      ['create_note', { title: 'nope' }],
      ['update_note', { id: noteId, title: 'nope' }],
      ['trash_note', { id: noteId }],
    ] as const) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      assert.equal(result.isError, true, name);
    }
    assert.deepEqual((await owner.get(`/api/notes/${noteId}`)).body, before);
    assert.equal((await owner.get('/api/notes')).body.length, 1);
  });
});

describe('checklist and append rules shared by every path (contentEdits)', () => {
  it('finds indented, starred and CRLF task lines, skipping code fences', () => {
    const content =
      'intro\r\n  - [ ] one\r\n+ [X] two\r\n~~~\r\n- [ ] code\r\n~~~\r\n-[ ] not a task\r\n- [ ]three';
    assert.deepEqual(
      checklistItems(content).map(({ index, text, checked }) => ({ index, text, checked })),
      [
        { index: 0, text: 'one', checked: false },
        { index: 1, text: 'two', checked: true },
        { index: 2, text: 'three', checked: false },
      ],
    );
  });

  it('changes only the mark of the chosen item, keeping an existing X', () => {
    const content = '- [ ] one\r\n- [X] two';
    const [one, two] = checklistItems(content);
    assert.equal(setItemChecked(content, one!, true), '- [x] one\r\n- [X] two');
    assert.equal(setItemChecked(content, two!, true), content);
    assert.equal(setItemChecked(content, two!, false), '- [ ] one\r\n- [ ] two');
  });

  it('prefers an exact text match and reports ambiguity', () => {
    const items = checklistItems('- [ ] milk\n- [ ] oat milk\n- [ ] milk chocolate');
    assert.deepEqual(pickChecklistItem(items, { text: ' MILK ' }), { found: items[0] });
    assert.equal((pickChecklistItem(items, { text: 'choc' }) as { found: unknown }).found, items[2]);
    assert.deepEqual(pickChecklistItem(items, { text: 'mil' }), { problem: 'ambiguous', candidates: items });
    assert.deepEqual(pickChecklistItem([], { index: 0 }), { problem: 'no_items', candidates: [] });
  });

  it('appends on a new line only where one is missing', () => {
    assert.equal(appendText('', 'a'), 'a');
    assert.equal(appendText('a\n', 'b'), 'a\nb');
    assert.equal(appendText('a', 'b'), 'a\nb');
  });
});

describe('POST /api/mcp under a storage quota', () => {
  let server: TestServer;
  let client: Client;
  before(async () => {
    server = await startServer({ env: { STORAGE_QUOTA_MB: '1' } });
    const owner = await setupOwner(server);
    ({ client } = await connect(server.url, (await createApiKey(owner)).key));
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('refuses create_note and append_to_note past the quota as tool errors, storing nothing', async () => {
    const noteIds: string[] = [];
    for (const length of [900_000, 100_000]) {
      const created = (await client.callTool({
        name: 'create_note',
        arguments: { content: 'q'.repeat(length) },
      })) as CallToolResult;
      assert.ok(!created.isError, JSON.stringify(created.content));
      noteIds.push((created.structuredContent as Structured).note.id);
    }
    for (const [name, args] of [
      ['create_note', { content: 'q'.repeat(50_000) }],
      ['append_to_note', { id: noteIds[1], text: 'q'.repeat(50_000) }],
    ] as const) {
      const refused = (await client.callTool({ name, arguments: args })) as CallToolResult;
      assert.equal(refused.isError, true, name);
      assert.match((refused.content[0] as { text: string }).text, /storage quota .* \(quota_exceeded\)$/);
    }
    const listed = (await client.callTool({ name: 'list_notes', arguments: {} })) as CallToolResult;
    assert.deepEqual(
      (listed.structuredContent as Structured).notes.map((n: { id: string; version: number }) => n.version),
      [1, 1],
    );
  });
});
