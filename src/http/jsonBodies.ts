import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.js';
import { findString, hasNul, NUL_MESSAGE } from '../storableText.js';

/** A UTF-16 surrogate that is not half of a pair: no character, and UTF-8 cannot encode it. */
const LONE_SURROGATE = /\p{Cs}/u;
/**
 * Decoded UTF-8 never holds a lone surrogate, so one can only come from a `\uD800`–`\uDFFF`
 * escape: a body without such an escape is not walked at all.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** JSON can only carry U+0000 as this escape (a raw control character is invalid JSON). */
const NUL_ESCAPE = '\\u0000';

/**
 * The JSON pointer of the first string (value or object key) of `value` holding a lone
 * surrogate.
 */
export function findLoneSurrogate(value: unknown): string | undefined {
  return findString(value, (text) => LONE_SURROGATE.test(text));
}

/**
 * Every JSON body (REST, sync, MCP), parsed as Fastify does (prototype-poisoning checks
 * included), except:
 * - a body with a string holding a lone surrogate is refused with 400. Stored as UTF-8 such a
 *   string changes (each becomes U+FFFD) and can grow past its limit, so a note read back could
 *   not be written back; refusing keeps what is stored exactly what was sent;
 * - so is a string holding U+0000, which PostgreSQL cannot store: refused on both engines, so
 *   that the service answers the same on either and any SQLite database can move to PostgreSQL
 *   (src/storableText.ts);
 * - an empty body sent to a route that takes none (DELETE, logout) is no body rather than 400
 *   invalid_json: many clients send `Content-Type: application/json` on every request. A route
 *   that needs a body still answers its 400.
 */
export function registerJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body: string, done) => {
    if (body === '' && !request.routeOptions.schema?.body) return done(null, undefined);
    parseJson(request, body, (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      const surrogate = SURROGATE_ESCAPE.test(body) ? findLoneSurrogate(value) : undefined;
      if (surrogate !== undefined) {
        const message = 'contains a lone surrogate (invalid UTF-16); send valid Unicode text';
        return done(errors.invalidField(surrogate, message), undefined);
      }
      const nul = body.includes(NUL_ESCAPE) ? findString(value, hasNul) : undefined;
      if (nul !== undefined) return done(errors.invalidField(nul, NUL_MESSAGE), undefined);
      done(null, value);
    });
  });
}
