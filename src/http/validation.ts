import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { IANAZone } from 'luxon';
import { findString, hasNul, NUL_MESSAGE } from '../storableText.js';
import { compileOnce } from './compileOnce.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
    // Route schemas embed what they share (no $ref): held by $id in the instance, a schema first
    // compiled inside another (NoteInput in a sync push) could not then be compiled alone.
    addUsedSchema: false,
  });
  return addOwnFormats(addFormats(ajv));
}

/** The formats of our own schemas, for every Ajv that checks them. */
export function addOwnFormats(ajv: Ajv): Ajv {
  // Reminders' time zones (docs/reminders.md): IANA names the runtime knows.
  return ajv.addFormat('time-zone', {
    type: 'string',
    validate: (name: string) => IANAZone.isValidZone(name),
  });
}

/**
 * Two validators: query strings, params and headers arrive as text and are coerced
 * (`since=5` is a number); JSON bodies are not, so `"pinned": "true"` is a 400 (D-NOTE-2).
 */
const bodies = makeAjv(false);
const texts = makeAjv('array');

export const validators = compileOnce<ValidateFunction>();

/**
 * A path or query value holding U+0000 (`%00`), as a failed validation: refused before any
 * schema, whatever type it would have, so that it never reaches a query (src/storableText.ts).
 * The error handler then answers it as any other: 400, or 404 for a note id.
 */
function nulIssue(data: unknown): ErrorObject[] | null {
  const path = findString(data, hasNul);
  if (path === undefined) return null;
  return [
    {
      instancePath: path === '/' ? '' : path,
      keyword: 'nul',
      schemaPath: '#',
      params: {},
      message: NUL_MESSAGE,
    },
  ];
}

/**
 * Validators compiled on a route's first request (compileOnce.ts), then reused by any app built
 * in this process. Fastify reads a failed validation's `errors` from the function it was given.
 */
export function registerValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const kind = httpPart === 'body' ? 'body' : 'text';
    const compiled = validators.onFirstUse(
      () => `${kind} ${JSON.stringify(schema)}`,
      () => (kind === 'body' ? bodies : texts).compile(schema),
    );
    const validate = (data: unknown) => {
      // JSON bodies are checked as they are parsed (jsonBodies.ts).
      const nul = kind === 'text' ? nulIssue(data) : null;
      if (nul) {
        validate.errors = nul;
        return false;
      }
      const compiledValidator = compiled();
      const valid = compiledValidator(data);
      validate.errors = compiledValidator.errors;
      return valid;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  });
}
