import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's security headers instead of the API's (a page with its own CSP). */
    securityHeaders?: SecurityHeaders;
  }
}

export type SecurityHeaders = Readonly<Record<string, string>>;

/**
 * The headers helmet sets for `options`, computed once. helmet's middleware rebuilds them and
 * re-parses the CSP on every request (34 µs of a 400 µs by-id read, docs/benchmarks.md); they
 * never depend on the request, so each response gets the same precomputed object.
 */
export function securityHeaders(options: HelmetOptions): SecurityHeaders {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string) => {
      headers[name.toLowerCase()] = value;
    },
    removeHeader: () => {},
  };
  let failure: unknown;
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (err?: unknown) => {
    failure = err;
  });
  if (failure) throw failure;
  return Object.freeze(headers);
}

/**
 * The API's headers. JSON API: nothing here is a document to run scripts in; pages (docs,
 * share) set their own CSP. No upgrade-insecure-requests: on plain http (a LAN address) it
 * would send the pages' own images and scripts to https, where nothing answers; HTTPS
 * deployments redirect anyway.
 */
const API_SECURITY_HEADERS = securityHeaders({
  contentSecurityPolicy: {
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], upgradeInsecureRequests: null },
  },
});

/** Sets the route's security headers (the API's unless the route names its own) on every answer. */
export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(request.routeOptions.config.securityHeaders ?? API_SECURITY_HEADERS);
    done();
  });
}
