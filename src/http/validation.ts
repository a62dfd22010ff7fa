import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

/**
 * Two validators: query strings, params and headers arrive as text and are coerced
 * (`since=5` is a number); JSON bodies are not, so `"pinned": "true"` is a 400 (D-NOTE-2).
 */
export function registerValidation(app: FastifyInstance): void {
  const bodies = makeAjv(false);
  const texts = makeAjv('array');
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodies : texts).compile(schema));
}
