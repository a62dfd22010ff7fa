import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Type } from 'typebox';
import { asAppError } from '../../db/outage.js';
import { actorOf, requestOrigin } from '../../http/auth.js';
import { errorResponses, NoteIdParams, withHeaders } from '../../http/schemas.js';
import type { SecurityHeaders } from '../../http/securityHeaders.js';
import { sendStoredFile } from '../attachments/download.js';
import { FileETag, ImageBinary } from '../attachments/schemas.js';
import { PAGE_SECURITY_HEADERS, renderNoticePage, renderSharedNotePage } from './page.js';
import { HtmlPage, SharedAttachmentParams, SharedAttachmentQuery, TokenParams } from './schemas.js';

/** D-SHARE-2: GET /api/shared/{token} and the page /s/{token} share one budget per client IP. */
export const SHARED_NOTE_RATE_LIMIT = 60;
/** D-SHARE-2: images of shared notes, per client IP (a page may show many thumbnails). */
export const SHARED_ATTACHMENT_RATE_LIMIT = 300;

/** Public answers leak nothing onwards, are not cached (a revoked link is 404 at once) nor indexed. */
async function publicShareHeaders(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.headers({
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    'x-robots-tag': 'noindex, nofollow',
  });
}

/**
 * What every public share route has: no authentication, the headers above, a rate limit, and
 * its own security headers when it is a page.
 */
function publicShareRoute(limit: onRequestHookHandler, headers?: SecurityHeaders) {
  return {
    config: { auth: 'public' as const, ...(headers ? { securityHeaders: headers } : {}) },
    onRequest: [publicShareHeaders, limit],
  };
}

export const sharingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { sharing, attachments } = app.services;
  const publicUrl = app.appConfig.publicUrl;
  const tags = ['sharing'];
  // One limiter instance = one counter store, used by both routes below. (A route-level config
  // with groupId would not do: the plugin keeps a separate store per route.)
  const sharedNoteLimit = app.rateLimit({ max: SHARED_NOTE_RATE_LIMIT, timeWindow: '1 minute' });
  const sharedAttachmentLimit = app.rateLimit({ max: SHARED_ATTACHMENT_RATE_LIMIT, timeWindow: '1 minute' });

  app.post(
    '/api/notes/:id/share',
    {
      schema: {
        tags,
        summary: 'Publish the note read-only; returns the existing link if it has one (owner only)',
        params: NoteIdParams,
        response: { 201: { $ref: 'ShareLink' }, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const origin = publicUrl ?? requestOrigin(request);
      const link = await sharing.share(actorOf(request), request.params.id, origin);
      return reply.code(201).send(link);
    },
  );

  app.delete(
    '/api/notes/:id/share',
    {
      schema: {
        tags,
        summary: 'Turn the public link off; 204 also when there was none (owner only)',
        params: NoteIdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await sharing.revoke(actorOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/shared/:token',
    {
      ...publicShareRoute(sharedNoteLimit),
      schema: {
        tags,
        summary: 'A publicly shared note as JSON (no authentication; 60 requests a minute per IP)',
        params: TokenParams,
        response: { 200: { $ref: 'SharedNote' }, ...errorResponses(404, 429) },
      },
    },
    async (request) => (await sharing.sharedNote(request.params.token)).note,
  );

  app.get(
    '/api/shared/:token/attachment/:attachmentId',
    {
      ...publicShareRoute(sharedAttachmentLimit),
      schema: {
        tags,
        summary: 'An image of a publicly shared note; thumb=1 sends its WebP thumbnail (300 a minute per IP)',
        params: SharedAttachmentParams,
        querystring: SharedAttachmentQuery,
        response: {
          200: withHeaders(
            {
              description: 'The image with the stored type (thumbnails: image/webp) and the D-ATT-4 headers',
              content: { 'image/*': { schema: ImageBinary } },
            },
            { etag: FileETag },
          ),
          304: { description: 'If-None-Match names the current ETag', type: 'null' },
          ...errorResponses(400, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const { token, attachmentId } = request.params;
      const file = await sharing.sharedAttachment(token, attachmentId, request.query.thumb === '1');
      // The same sender as the owner's download (D-ATT-4 headers, ETag, 304), over the same storage.
      return sendStoredFile(request, reply, file, attachments.open);
    },
  );

  app.get(
    '/s/:token',
    {
      ...publicShareRoute(sharedNoteLimit, PAGE_SECURITY_HEADERS),
      errorHandler: renderPageError,
      schema: {
        tags,
        summary: 'The shared note as a read-only web page for people',
        params: TokenParams,
        operationId: 'getSharedNotePage',
        response: { 200: HtmlPage, 400: HtmlPage, 404: HtmlPage, 429: HtmlPage },
      },
    },
    async (request, reply) => {
      const view = await sharing.sharedNote(request.params.token);
      return reply.type('text/html; charset=utf-8').send(renderSharedNotePage(view, request.params.token));
    },
  );
};

/**
 * People get a page, not JSON: the friendly 404 for a dead link, and pages for 429 and 5xx (503
 * with Retry-After while the database or Redis is out of reach).
 */
function renderPageError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const known = asAppError(error);
  if (known?.headers) reply.headers(known.headers);
  const status =
    known?.statusCode ?? (error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500);
  if (status >= 500) request.log.error({ err: error }, 'share page failed');
  const notice = status === 404 ? 'unavailable' : status === 429 ? 'rate_limited' : 'error';
  return reply.code(status).type('text/html; charset=utf-8').send(renderNoticePage(notice));
}
