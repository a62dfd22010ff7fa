import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { Type } from 'typebox';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { tempDataDir } from './helpers/server.js';

const Probe = Type.Object({ name: Type.String({ minLength: 1 }) });

/** Builds an app with one extra route that hands back its compiled validator and serializer. */
async function compiledFunctions(probeSchema: typeof Probe) {
  const dataDir = tempDataDir();
  const app = await buildApp(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { logger: false });
  let functions: { validate: unknown; serialize: unknown } | undefined;
  app.post(
    '/api/probe',
    { config: { auth: 'public' }, schema: { body: probeSchema, response: { 200: probeSchema } } },
    async (request, reply) => {
      functions = {
        validate: request.getValidationFunction('body'),
        serialize: reply.getSerializationFunction('200'),
      };
      return request.body;
    },
  );
  try {
    const valid = await app.inject({ method: 'POST', url: '/api/probe', payload: { name: 'x' } });
    assert.equal(valid.statusCode, 200, valid.body);
    assert.deepEqual(valid.json(), { name: 'x' });
    const invalid = await app.inject({ method: 'POST', url: '/api/probe', payload: { name: '' } });
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().code, 'validation_failed');
    return functions!;
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('schema compilers (src/http/compileOnce.ts)', () => {
  it('reuses validators and serializers compiled for the same schema by an earlier app', async () => {
    const first = await compiledFunctions(Probe);
    const second = await compiledFunctions(Type.Object({ name: Type.String({ minLength: 1 }) }));
    assert.equal(second.validate, first.validate);
    assert.equal(second.serialize, first.serialize);
  });

  it('compiles a different schema afresh, and it still validates by its own rules', async () => {
    const first = await compiledFunctions(Probe);
    const other = await compiledFunctions(Type.Object({ name: Type.String({ minLength: 1, maxLength: 5 }) }));
    assert.notEqual(other.validate, first.validate);
    assert.notEqual(other.serialize, first.serialize);
  });
});
