import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { attach, downloadSha, image, sha256 } from './helpers/archives.js';
import { createApiKey, setupOwner, TestClient } from './helpers/client.js';
import { onPostgres } from './helpers/postgres.js';
import { assertLimitsHold } from './helpers/rateLimits.js';
import { type ServerProcess, skewedClockEnv, withServerProcesses } from './helpers/server.js';
import { push } from './helpers/sync.js';

/** Process 1's clock runs an hour ahead of the others', as on a machine whose clock is off. */
const SKEWED = 1;
const HOUR = 60 * 60 * 1000;

/**
 * A load balancer in front of the processes: each request goes to the next one in turn, with
 * the client's cookies, which it keeps across them as a browser would.
 */
function balancer(servers: ServerProcess[], signedIn: TestClient) {
  let turn = 0;
  const jar = signedIn.cookies;
  return {
    /** The next process's address. */
    nextUrl: () => servers[turn++ % servers.length]!.url,
    /** `use` with a client of the next process (or of process `i`) holding the jar's cookies. */
    async send<T>(use: (client: TestClient) => Promise<T>, i = turn++ % servers.length): Promise<T> {
      const client = new TestClient(servers[i]!.url);
      for (const [name, value] of jar) client.cookies.set(name, value);
      try {
        return await use(client);
      } finally {
        jar.clear();
        for (const [name, value] of client.cookies) jar.set(name, value);
      }
    },
  };
}

const updatedAtOf = (note: { updatedAt: string }) => Date.parse(note.updatedAt);

/**
 * Three server processes on one PostgreSQL database and one DATA_DIR, every request of a client
 * sent to the next process (docs/decisions/0022-several-processes.md): nothing a client needs
 * lives in one process's memory.
 */
describe('3 processes behind a round-robin balancer', {
  skip: !onPostgres && 'needs TEST_DATABASE_URL',
}, () => {
  it('serve one client whichever process gets each request', async (t) => {
    await withServerProcesses(
      3,
      async (servers) => {
        const owner = await setupOwner(servers[0]!.url);
        const lb = balancer(servers, owner);

        await t.test('updatedAt never goes backwards, though one process runs an hour ahead', async () => {
          const created = await lb.send((c) => c.post('/api/notes', { title: 'clock' }), SKEWED);
          assert.equal(created.status, 201, created.text);
          let previous = updatedAtOf(created.body);
          assert.ok(previous > Date.now() + HOUR / 2, 'stamped by the skewed process');
          for (let n = 0; n < 6; n++) {
            const updated = await lb.send((c) =>
              c.patch(`/api/notes/${created.body.id}`, { content: `${n}` }),
            );
            assert.equal(updated.status, 200, updated.text);
            assert.ok(updatedAtOf(updated.body) >= previous, `update ${n} went back in time`);
            previous = updatedAtOf(updated.body);
          }
          // A pull on the process ahead hands out its time; a note written later on a process
          // behind must not be stamped before it (decision 0016), or the next pull misses it.
          const pulled = await lb.send((c) => c.get('/api/sync?since=0'), SKEWED);
          const syncTime = Number(pulled.headers.get('x-sync-time'));
          const later = await lb.send((c) => c.post('/api/notes', { title: 'later' }), (SKEWED + 1) % 3);
          assert.ok(updatedAtOf(later.body) >= syncTime);
          const next = await lb.send((c) => c.get(`/api/sync?since=${syncTime}`));
          assert.ok(next.body.some((note: { id: string }) => note.id === later.body.id));
        });

        await t.test('a push on one process reaches a pull on another', async () => {
          const since = Number((await lb.send((c) => c.get('/api/sync?since=0'))).headers.get('x-sync-time'));
          const noteId = crypto.randomUUID();
          const data = { title: 'pushed', content: 'from a device' };
          const [created] = await lb.send((c) =>
            push(c, [{ noteId, operation: 'create', timestamp: 1, data }]),
          );
          assert.equal(created!.status, 'applied');
          const pulled = await lb.send((c) => c.get(`/api/sync?since=${since}`));
          const note = pulled.body.find((n: { id: string }) => n.id === noteId);
          assert.equal(note?.content, 'from a device');
          const change = { noteId, operation: 'update' as const, timestamp: 2, baseVersion: note.version };
          const [updated] = await lb.send((c) => push(c, [{ ...change, data: { content: 'edited' } }]));
          assert.equal(updated!.status, 'applied');
          const again = await lb.send((c) => c.get(`/api/sync?since=${pulled.headers.get('x-sync-time')}`));
          assert.equal(again.body.find((n: { id: string }) => n.id === noteId)?.content, 'edited');
        });

        await t.test('an attachment uploaded on one process downloads from every other', async () => {
          const note = (await lb.send((c) => c.post('/api/notes', { title: 'photo' }))).body;
          const bytes = await image(7);
          const uploaded = await lb.send((c) => attach(c, note.id, bytes));
          assert.equal(uploaded.status, 201, uploaded.text);
          for (let i = 0; i < servers.length; i++) {
            assert.equal(await lb.send((c) => downloadSha(c, note.id, uploaded.body.id)), sha256(bytes));
          }
        });

        await t.test('an MCP session opened on one process is used and ended on the others', async () => {
          const { key } = await lb.send((c) => createApiKey(c));
          const served = new Set<string>();
          const transport = new StreamableHTTPClientTransport(new URL('/api/mcp', servers[0]!.url), {
            requestInit: { headers: { authorization: `Bearer ${key}` } },
            fetch: (url, init) => {
              const target = new URL(url);
              target.host = new URL(lb.nextUrl()).host;
              served.add(target.host);
              return fetch(target, init);
            },
          });
          const agent = new Client({ name: 'balanced-agent', version: '1.0.0' });
          await agent.connect(transport);
          const sessionId = transport.sessionId!;
          const created = (await agent.callTool({
            name: 'create_note',
            arguments: { title: 'by the agent' },
          })) as CallToolResult;
          assert.ok(!created.isError, JSON.stringify(created.content));
          const id = (created.structuredContent as { note: { id: string } }).note.id;
          const read = (await agent.callTool({ name: 'get_note', arguments: { id } })) as CallToolResult;
          assert.equal((read.structuredContent as { note: { title: string } }).note.title, 'by the agent');
          assert.equal(served.size, servers.length, 'every process served the session');

          await transport.terminateSession();
          for (const server of servers) {
            const after = await fetch(new URL('/api/mcp', server.url), {
              method: 'POST',
              headers: {
                authorization: `Bearer ${key}`,
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
                'mcp-session-id': sessionId,
              },
              body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
            });
            assert.equal(after.status, 404, 'the ended session is unknown to every process');
          }
          await agent.close();
        });

        await t.test('share and login limits count every process, one of them an hour ahead', async () => {
          await assertLimitsHold(servers, owner);
        });

        await t.test('a sign-out on one process ends the session on every process', async () => {
          for (let i = 0; i < servers.length; i++) {
            assert.equal((await lb.send((c) => c.get('/api/users/me'))).status, 200);
          }
          // The cookie as a thief (or a stale tab) would still send it after the sign-out.
          const signedOut = new Map(owner.cookies);
          const logout = await lb.send((c) => c.post('/api/auth/logout'));
          assert.ok(logout.status < 300, logout.text);
          for (const server of servers) {
            const client = new TestClient(server.url);
            for (const [name, value] of signedOut) client.cookies.set(name, value);
            assert.equal((await client.get('/api/users/me')).status, 401);
          }
        });
      },
      { envOf: (i) => (i === SKEWED ? skewedClockEnv(HOUR) : {}) },
    );
  });
});
