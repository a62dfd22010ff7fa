import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { setupOwner } from './helpers/client.js';
import { spawnServer, tempDataDir } from './helpers/server.js';

interface Operation {
  parameters?: { in: 'path' | 'query' | 'header'; name: string }[];
  requestBody?: unknown;
}

/**
 * Validators compile at a route's first request (decision 0017), in whatever order requests
 * come: a server process of its own starts with none compiled. Every documented operation gets
 * input its schemas refuse, last route first (a sync push before the note routes whose schemas
 * it holds), and must answer a 4xx: a validator that cannot compile, alone or after another,
 * answers 500.
 */
describe('every route validates its input, whatever the order of first requests', () => {
  it('answers each operation’s invalid input with a 4xx, last route first', async (t) => {
    const dataDir = tempDataDir();
    const server = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: '' });
    t.after(() => {
      server.child.kill();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const owner = await setupOwner(server.url);
    const document = (
      await owner.get<{ paths: Record<string, Record<string, Operation>> }>('/api/openapi.json')
    ).body;
    const operations = Object.entries(document.paths)
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
      )
      // Nothing to validate (sign out among them): the request would only run the handler.
      .filter(({ operation }) => operation.parameters?.length || operation.requestBody)
      .reverse();
    assert.ok(operations.length >= 30, `${operations.length} operations with inputs`);
    // A real note (the note routes answer 404 to an id that is not one before they read a body),
    // pushed as the web app makes its notes: no note route has had a request yet.
    const noteId = randomUUID();
    const pushed = await owner.post('/api/sync', {
      changes: [{ noteId, operation: 'create', timestamp: Date.now(), data: { title: 'Valid' } }],
    });
    assert.equal(pushed.status, 200);
    const key = await owner.post<{ key: string }>('/api/settings/api-keys', { name: 'MCP' });
    const answers: string[] = [];
    for (const { path, method, operation } of operations) {
      const parameters = operation.parameters ?? [];
      const invalid = (where: 'query' | 'header') =>
        Object.fromEntries(parameters.filter((p) => p.in === where).map((p) => [p.name, 'not-valid']));
      const query = new URLSearchParams(invalid('query'));
      const headers: Record<string, string> = invalid('header');
      const url = `${path.replace('{id}', noteId).replace(/\{[^}]+\}/g, 'not-valid')}${query.size > 0 ? `?${query}` : ''}`;
      // MCP takes API keys only.
      if (path.startsWith('/api/mcp')) headers.authorization = `Bearer ${key.body.key}`;
      const response = await owner.request(method.toUpperCase(), url, {
        headers,
        ...(operation.requestBody ? { json: ['not', 'an', 'object'] } : {}),
      });
      answers.push(
        `${method.toUpperCase()} ${path}: ${response.status} ${response.status >= 500 ? response.text : ''}`,
      );
    }
    const failed = answers.filter((answer) => /: 5\d\d /.test(answer));
    assert.deepEqual(failed, [], answers.join('\n'));
    // Most reach their validators (others stop before: the content type, a share token).
    assert.ok(answers.filter((answer) => /: 400 /.test(answer)).length >= 20, answers.join('\n'));
  });
});
