import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebBundle } from './bundle.js';

/**
 * The app's CSP (docs/decisions/0013-web-app.md): same-origin only, no inline script or style.
 * The service worker runs under the CSP of its own response, so sw.js carries this one too;
 * with the API's `default-src 'none'` its precache fetches were refused and it never installed.
 */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Vite names everything under /assets/ by its content hash: a changed file has a new name. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html, the service worker and the manifest: revalidated on every load, so updates arrive. */
const REVALIDATE = 'no-cache';

function setAppHeaders(reply: FastifyReply): void {
  // reply.header, not the raw response's: it replaces the API CSP helmet set in its onRequest.
  reply.header('content-security-policy', APP_CSP);
}

/** The static files of the bundle, public, with their caching and the app's CSP. */
const webAppRoutes: FastifyPluginAsync<{ bundle: WebBundle }> = async (app, { bundle }) => {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, auth: 'public' };
  });
  app.addHook('onRequest', async (_request, reply) => setAppHeaders(reply));
  await app.register(fastifyStatic, {
    root: bundle.root,
    // One route per file found at start-up, so any other path stays a real 404 (JSON under /api).
    wildcard: false,
    preCompressed: true,
    globIgnore: ['**/*.br', '**/*.gz'],
    cacheControl: false,
    setHeaders: (response, file) => {
      response.setHeader('cache-control', file.includes('/assets/') ? IMMUTABLE : REVALIDATE);
    },
  });
};

/**
 * A browser navigation the API does not answer gets the app, which routes on the client: a GET or
 * HEAD that accepts HTML, outside /api and the share pages (their 404s stay theirs).
 */
function isAppNavigation(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const pathname = request.url.split('?')[0]!;
  if (/^\/(api|s)(\/|$)/.test(pathname)) return false;
  return (request.headers.accept ?? '').includes('text/html');
}

/** The not-found handler's first resort: the app's page for a navigation, else nothing. */
export function appPageFallback(bundle: WebBundle) {
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    if (!isAppNavigation(request)) return undefined;
    setAppHeaders(reply);
    return reply
      .code(200)
      .header('cache-control', REVALIDATE)
      .type('text/html; charset=utf-8')
      .send(bundle.page);
  };
}

/** Serves the bundle, or says once that only the API is served. */
export async function registerWebApp(app: FastifyInstance, bundle: WebBundle | null): Promise<void> {
  if (bundle) await app.register(webAppRoutes, { bundle });
  else
    app.log.warn(
      'The web app is not built (no dist/web/index.html): serving the API only. `npm run build` builds it.',
    );
}
