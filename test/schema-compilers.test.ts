import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { Type } from 'typebox';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { serializers } from '../src/http/serialization.js';
import { validators } from '../src/http/validation.js';
import { tempDataDir } from './helpers/server.js';

/** A schema no other test compiles: each call of this file's tests starts from none compiled. */
function probeSchema(maxLength?: number) {
  return Type.Object({ name: Type.String({ minLength: 1, maxLength }) }, { description: randomUUID() });
}

const compiledCount = () => validators.size + serializers.size;

/**
 * Builds an app with one extra route for `schema`, and answers how many schema functions the
 * process compiled once the app was ready, and then for the route's requests.
 */
async function compiledFor(schema: ReturnType<typeof probeSchema>, maxLength?: number) {
  const dataDir = tempDataDir();
  const app = await buildApp(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { logger: false });
  app.post(
    '/api/probe',
    { config: { auth: 'public' }, schema: { body: schema, response: { 200: schema } } },
    async (request) => request.body,
  );
  try {
    const before = compiledCount();
    await app.ready();
    const atReady = compiledCount() - before;
    const valid = await app.inject({ method: 'POST', url: '/api/probe', payload: { name: 'x', extra: 1 } });
    assert.equal(valid.statusCode, 200, valid.body);
    // The serializer is the route's: it drops what the response schema does not name.
    assert.deepEqual(valid.json(), { name: 'x' });
    const invalid = await app.inject({ method: 'POST', url: '/api/probe', payload: { name: '' } });
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().code, 'validation_failed');
    if (maxLength !== undefined) {
      const tooLong = await app.inject({
        method: 'POST',
        url: '/api/probe',
        payload: { name: 'x'.repeat(maxLength + 1) },
      });
      assert.equal(tooLong.statusCode, 400);
    }
    return { atReady, forRequests: compiledCount() - before - atReady };
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('schema compilers (src/http/compileOnce.ts)', () => {
  it('compiles a route validator and serializer at its first request, not when the app starts', async () => {
    const { atReady, forRequests } = await compiledFor(probeSchema());
    assert.equal(atReady, 0);
    assert.equal(forRequests, 2);
  });

  it('reuses the validator and serializer an earlier app compiled for the same schema', async () => {
    const schema = probeSchema();
    await compiledFor(schema);
    const again = await compiledFor(structuredClone(schema));
    assert.deepEqual(again, { atReady: 0, forRequests: 0 });
  });

  it('compiles a different schema afresh, and it validates by its own rules', async () => {
    const schema = probeSchema();
    await compiledFor(schema);
    const other = await compiledFor({ ...schema, properties: probeSchema(5).properties }, 5);
    assert.deepEqual(other, { atReady: 0, forRequests: 2 });
  });
});
