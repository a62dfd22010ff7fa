import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { clientOf, createApiKey, setupOwner } from './helpers/client.js';
import { openEvents } from './helpers/events.js';
import { startServer, type TestServer } from './helpers/server.js';

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  op: Schema;
}

const MISSING_ID = '00000000-0000-4000-8000-000000000000';
const SESSION = [{ session: [] }];
const sessionOrKey = (scope: string) => [{ session: [] }, { apiKey: [scope] }];
const KEY = [{ apiKey: ['notes:read'] }];

function operationsOf(doc: Schema): Operation[] {
  return Object.entries(doc.paths as Record<string, Schema>).flatMap(([route, item]) =>
    Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path: route, op })),
  );
}

/** A concrete URL for an OpenAPI path: every path parameter filled with a well-formed value. */
function urlOf(route: string): string {
  return route.replace(/\{(\w+)\}/g, (_match, name: string) =>
    name === 'token' ? 'a'.repeat(43) : MISSING_ID,
  );
}

/** The smallest value `schema` accepts: its required properties only, each the simplest of its type. */
function smallestValueOf(schema: Schema): unknown {
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'object':
      return Object.fromEntries(
        (schema.required ?? []).map((name: string) => [name, smallestValueOf(schema.properties[name])]),
      );
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return false;
    default:
      if (schema.format === 'date-time') return new Date(0).toISOString();
      return schema.format === 'uuid' ? MISSING_ID : 'x';
  }
}

const needsCredentials = (op: Schema) => op.security.length > 0;
/** An endless stream's status, read over a socket that is then closed (injecting it never ends). */
async function eventStreamStatus(url: string, headers: Record<string, string>) {
  const stream = await openEvents(url, headers);
  stream.close();
  return { status: stream.status, body: undefined as Schema | undefined, text: '' };
}
const isEventStream = (op: Schema) => op.responses['200']?.content?.['text/event-stream'] !== undefined;

const acceptsKey = (op: Schema) => op.security.some((r: Schema) => 'apiKey' in r);
/** The API key scopes an operation declares it needs. */
const keyScopes = (op: Schema): string[] => op.security.flatMap((r: Schema) => r.apiKey ?? []);

describe('OpenAPI document (D-OPS-5)', () => {
  let server: TestServer;
  let doc: Schema;
  let operations: Operation[];
  let key: string;
  let readOnlyKey: string;
  const find = (method: string, route: string) => {
    const found = operations.find((o) => o.method === method && o.path === route);
    assert.ok(found, `${method} ${route} is not in the document`);
    return found.op;
  };

  before(async () => {
    server = await startServer();
    const response = await clientOf(server).get('/api/openapi.json');
    assert.equal(response.status, 200);
    doc = response.body;
    operations = operationsOf(doc);
    const owner = await setupOwner(server);
    key = (await createApiKey(owner)).key;
    readOnlyKey = (await owner.post('/api/settings/api-keys', { name: 'reader', scopes: ['notes:read'] }))
      .body.key;
  });
  after(() => server.close());

  it('gives every operation a unique operationId and names a server', () => {
    const ids = operations.map((o) => o.op.operationId);
    assert.ok(
      ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id)),
      JSON.stringify(ids),
    );
    assert.equal(new Set(ids).size, ids.length, 'operationIds repeat');
    assert.equal(find('GET', '/api/notes/{id}').operationId, 'getNotesById');
    assert.equal(find('GET', '/s/{token}').operationId, 'getSharedNotePage');
    assert.deepEqual(doc.servers, [{ url: '/', description: 'This server' }]);
  });

  it("declares each operation's real security: none, session only, key only, or either, with the key's scope", () => {
    assert.ok(
      operations.every((o) => Array.isArray(o.op.security)),
      'every operation says what it needs',
    );
    // An empty requirement ({}) would mean "optional": an operation that needs none says [].
    assert.ok(
      operations.every((o) => o.op.security.every((r: Schema) => Object.keys(r).length > 0)),
      'no optional requirement',
    );
    assert.deepEqual(find('GET', '/api/health').security, []);
    assert.deepEqual(find('POST', '/api/auth/login').security, []);
    assert.deepEqual(find('POST', '/api/auth/setup').security, []);
    assert.deepEqual(find('GET', '/api/shared/{token}').security, []);
    assert.deepEqual(find('GET', '/s/{token}').security, []);
    assert.deepEqual(find('GET', '/api/auth/status').security, []);
    assert.deepEqual(find('POST', '/api/auth/logout').security, SESSION);
    assert.deepEqual(find('POST', '/api/settings/api-keys').security, SESSION);
    assert.deepEqual(find('DELETE', '/api/users/{id}').security, SESSION);
    assert.deepEqual(find('POST', '/api/mcp').security, KEY);
    assert.deepEqual(find('GET', '/api/notes').security, sessionOrKey('notes:read'));
    assert.deepEqual(find('POST', '/api/sync').security, sessionOrKey('notes:write'));
    assert.deepEqual(find('POST', '/api/import').security, sessionOrKey('notes:write'));
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['apiKey', 'session']);
  });

  it('matches the server: the credentials it declares are required, and every status it answers is declared', async () => {
    const anonymous = clientOf(server);
    for (const { method, path: route, op } of operations) {
      const url = urlOf(route);
      const declared = Object.keys(op.responses);
      const bare = await anonymous.request(method, url);
      assert.ok(declared.includes(String(bare.status)), `${method} ${route}: ${bare.status} undeclared`);
      assert.equal(bare.status === 401, needsCredentials(op), `${method} ${route} without credentials`);

      const keyed = isEventStream(op)
        ? await eventStreamStatus(server.url, { authorization: `Bearer ${key}` })
        : await anonymous.request(method, url, { headers: { authorization: `Bearer ${key}` } });
      assert.ok(declared.includes(String(keyed.status)), `${method} ${route}: ${keyed.status} undeclared`);
      if (needsCredentials(op)) {
        assert.equal(keyed.status === 401, !acceptsKey(op), `${method} ${route} with an API key`);
      }
    }
  });

  it('matches the server on scopes: a read-only key is refused exactly where notes:write is declared', async () => {
    const reader = clientOf(server);
    const checked: string[] = [];
    for (const { method, path: route, op } of operations.filter((o) => acceptsKey(o.op))) {
      const scopes = keyScopes(op);
      assert.equal(scopes.length, 1, `${method} ${route} names one scope`);
      // The smallest body each JSON operation accepts, so the request gets past validation.
      const bodySchema = op.requestBody?.content['application/json']?.schema;
      const json = bodySchema ? smallestValueOf(bodySchema) : undefined;
      const query = new URLSearchParams(
        (op.parameters ?? [])
          .filter((p: Schema) => p.in === 'query' && p.required)
          .map((p: Schema) => [p.name, p.schema.format === 'uuid' ? MISSING_ID : '1']),
      );
      const response = isEventStream(op)
        ? await eventStreamStatus(server.url, { authorization: `Bearer ${readOnlyKey}` })
        : await reader.request(method, `${urlOf(route)}${query.size > 0 ? `?${query}` : ''}`, {
            headers: { authorization: `Bearer ${readOnlyKey}` },
            ...(json ? { json } : {}),
          });
      const refused = response.status === 403 && response.body?.code === 'insufficient_scope';
      assert.equal(
        refused,
        scopes[0] === 'notes:write',
        `${method} ${route}: ${response.status} ${response.text}`,
      );
      assert.notEqual(response.status, 401, `${method} ${route}`);
      checked.push(`${method} ${route} ${scopes[0]}`);
    }
    assert.ok(checked.filter((c) => c.endsWith('notes:write')).length >= 10, checked.join('\n'));
  });

  it('declares every 4xx answer of an API route with the error schema', () => {
    const errorSchema = (schema: Schema): boolean =>
      schema.$ref === '#/components/schemas/ErrorBody' || (schema.anyOf ?? []).some(errorSchema);
    for (const { method, path: route, op } of operations) {
      const statuses = Object.keys(op.responses).filter((status) => status.startsWith('4'));
      for (const status of statuses) {
        const content = op.responses[status].content;
        // The share page and the single sign-on routes answer people (browsers) with pages; the
        // MCP transport's refusals are JSON-RPC errors.
        if (route.startsWith('/s/') || route.startsWith('/api/auth/oidc/'))
          assert.ok(content['text/html'], `${route} ${status} is a page`);
        else if (route === '/api/mcp' && ['404', '405', '406'].includes(status)) continue;
        else assert.ok(errorSchema(content['application/json'].schema), `${method} ${route} ${status}`);
      }
    }
    const patch = find('PATCH', '/api/notes/{id}');
    for (const status of ['400', '401', '403', '404', '412', '413', '415']) {
      assert.ok(patch.responses[status], `PATCH /api/notes/{id} ${status}`);
    }
    assert.ok(find('POST', '/api/auth/login').responses['429']);
    assert.ok(find('POST', '/api/mcp').responses['401']);
    assert.equal(find('GET', '/api/notes').responses['403'], undefined, 'a read is never cross_origin');
  });

  it('declares the headers routes send: ETag, X-Sync-Time, Mcp-Session-Id, Set-Cookie, Retry-After', () => {
    const headersOf = (method: string, route: string, status: string) =>
      Object.keys(find(method, route).responses[status].headers ?? {});
    for (const [method, route, status] of [
      ['GET', '/api/notes/{id}', '200'],
      ['PATCH', '/api/notes/{id}', '200'],
      ['POST', '/api/notes', '201'],
      ['GET', '/api/notes/{id}/attachments', '200'],
      ['GET', '/api/shared/{token}/attachment/{attachmentId}', '200'],
    ] as const) {
      assert.ok(headersOf(method, route, status).includes('etag'), `${method} ${route}`);
    }
    assert.ok(headersOf('GET', '/api/sync', '200').includes('x-sync-time'));
    assert.ok(headersOf('GET', '/api/sync/deleted', '200').includes('x-sync-time'));
    assert.ok(headersOf('POST', '/api/mcp', '200').includes('mcp-session-id'));
    assert.ok(headersOf('POST', '/api/auth/login', '200').includes('set-cookie'));
    assert.ok(headersOf('POST', '/api/auth/setup', '201').includes('set-cookie'));
    assert.ok(headersOf('GET', '/api/notes', '200').includes('set-cookie'), 'a renewed session cookie');
    assert.ok(!headersOf('POST', '/api/mcp', '200').includes('set-cookie'), 'keys have no cookie');
    for (const { method, path: route, op } of operations) {
      if (op.responses['429']) assert.ok(op.responses['429'].headers['retry-after'], `${method} ${route}`);
    }
  });

  it('passes Redocly lint with the recommended rules, without errors', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: JSON.stringify(doc),
      absoluteRef: 'openapi.json',
      config,
    });
    const errors = problems
      .filter((problem) => problem.severity === 'error')
      .map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`);
    assert.deepEqual(errors, []);
  });

  it('makes an openapi-typescript client that type-checks, with operations, headers and errors typed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-client-'));
    try {
      fs.writeFileSync(path.join(dir, 'api.ts'), astToString(await openapiTS(JSON.stringify(doc))));
      // What a client author writes against the generated types; each line needs item 1's facts.
      const client = `
        import type { components, operations, paths } from './api';
        type Json<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
        export type Note = components['schemas']['Note'];
        export const version: operations['getNotesById']['responses'][200]['headers']['etag'] = '"3"';
        export const since: operations['getSync']['responses'][200]['headers']['x-sync-time'] = 1;
        export const session: operations['postMcp']['responses'][200]['headers']['mcp-session-id'] = 'id';
        export const wait: operations['postAuthLogin']['responses'][429]['headers']['retry-after'] = 30;
        export const stale: Json<operations['patchNotesById']['responses'][412]> = {
          statusCode: 412, error: 'Precondition Failed', code: 'version_mismatch', message: 'changed',
        };
        export const tooBig: Json<paths['/api/notes']['post']['responses'][413]>['code'] = 'payload_too_large';
        export const notes: Json<operations['getNotes']['responses'][200]> = [];
      `;
      fs.writeFileSync(path.join(dir, 'client.ts'), client);
      const program = ts.createProgram([path.join(dir, 'client.ts')], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        lib: ['lib.es2022.d.ts'],
        types: [],
        skipLibCheck: true,
      });
      const diagnostics = ts
        .getPreEmitDiagnostics(program)
        .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      assert.deepEqual(diagnostics, []);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
