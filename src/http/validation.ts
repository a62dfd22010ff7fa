import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { IANAZone } from 'luxon';
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
      const compiledValidator = compiled();
      const valid = compiledValidator(data);
      validate.errors = compiledValidator.errors;
      return valid;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  });
}
