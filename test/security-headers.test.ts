/**
 * The security headers are computed once (src/http/securityHeaders.ts) instead of by
 * @fastify/helmet on every request. Every kind of answer must carry exactly the headers that
 * @fastify/helmet, configured as the server used to configure it, gives the same route.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import helmet from '@fastify/helmet';
import Fastify, { type FastifyInstance } from 'fastify';
import { PAGE_CSP_DIRECTIVES } from '../src/features/sharing/page.js';
import { TestClient } from './helpers/client.js';
import { useOwner, useServer } from './helpers/server.js';

/** What helmet sets: every header name it wrote on the reference answer. */
const HELMET_HEADERS = [
  'content-security-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'origin-agent-cluster',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-frame-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
];

/** The configuration the server gave @fastify/helmet before the headers were precomputed. */
async function helmetReference(): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], upgradeInsecureRequests: null },
    },
  });
  app.get('/api/json', async () => ({}));
  app.get(
    '/s/:token',
    { helmet: { contentSecurityPolicy: { useDefaults: false, directives: PAGE_CSP_DIRECTIVES } } },
    async () => '',
  );
  return app;
}

function helmetPart(headers: Headers | Record<string, unknown>): Record<string, string | undefined> {
  const get = (name: string) =>
    headers instanceof Headers ? (headers.get(name) ?? undefined) : (headers[name] as string | undefined);
  return Object.fromEntries(HELMET_HEADERS.map((name) => [name, get(name)]));
}

describe('security headers', () => {
  const server = useServer();
  const owner = useOwner(server);
  let reference: FastifyInstance;
  let apiHeaders: Record<string, string | undefined>;
  let pageHeaders: Record<string, string | undefined>;

  before(async () => {
    reference = await helmetReference();
    apiHeaders = helmetPart((await reference.inject('/api/json')).headers);
    pageHeaders = helmetPart((await reference.inject('/s/abc')).headers);
    assert.ok(
      HELMET_HEADERS.every((name) => apiHeaders[name] !== undefined),
      'helmet sets all of them',
    );
  });
  after(() => reference.close());

  it('are helmet’s on API answers: a note, a list, an error, an unknown path', async () => {
    const note = await owner.post('/api/notes', { title: 'headers' });
    const answers = [
      note,
      await owner.get(`/api/notes/${note.body.id}`),
      await owner.get('/api/notes'),
      await new TestClient(server.url).get('/api/notes'),
      await owner.get('/api/notes/00000000-0000-4000-8000-000000000000'),
      await owner.get('/api/nothing-here'),
      await new TestClient(server.url).get('/api/health'),
    ];
    for (const answer of answers) assert.deepEqual(helmetPart(answer.headers), apiHeaders);
  });

  it('are helmet’s route-level ones on the share page and its error page', async () => {
    const note = await owner.post('/api/notes', { title: 'shared' });
    const { url } = (await owner.post(`/api/notes/${note.body.id}/share`)).body;
    const page = await new TestClient(server.url).get(new URL(url).pathname);
    assert.equal(page.status, 200);
    assert.deepEqual(helmetPart(page.headers), pageHeaders);
    const missing = await new TestClient(server.url).get(`/s/${'x'.repeat(43)}`);
    assert.equal(missing.status, 404);
    assert.deepEqual(helmetPart(missing.headers), pageHeaders);
  });

  it('leave the docs page its own CSP and set helmet’s others', async () => {
    const docs = await new TestClient(server.url).get('/api/docs/');
    assert.equal(docs.status, 200);
    const { 'content-security-policy': csp, ...others } = helmetPart(docs.headers);
    const { 'content-security-policy': apiCsp, ...apiOthers } = apiHeaders;
    assert.deepEqual(others, apiOthers);
    assert.notEqual(csp, apiCsp);
  });
});
