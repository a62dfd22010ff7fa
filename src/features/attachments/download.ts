import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { matchesEtag } from '../../http/conditional.js';
import { inlineDisposition } from './filenames.js';
import type { StoredFile } from './service.js';

/**
 * Content never changes under an attachment id, but who may see it does (sign-out, a revoked
 * share link, a note unshared): a browser keeps its copy yet asks again every time, and gets a
 * bodiless 304 only while the request is still allowed (decision 0030). A year's `immutable`
 * showed the previous user's images after sign-out on a shared computer.
 */
const CACHE_CONTROL = 'private, no-cache';

/**
 * Sends a stored attachment file with the D-ATT-4 headers, or 304 when the client's
 * If-None-Match already names it (the file is not opened then). Shared by every route that
 * serves attachment bytes.
 */
export async function sendStoredFile(
  request: FastifyRequest,
  reply: FastifyReply,
  file: StoredFile,
  open: (file: StoredFile) => Promise<{ stream: Readable; size: number }>,
): Promise<FastifyReply> {
  reply
    .header('etag', file.etag)
    .header('cache-control', CACHE_CONTROL)
    .header('x-content-type-options', 'nosniff');
  if (matchesEtag(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
  const { stream, size } = await open(file);
  return reply
    .type(file.mimeType)
    .header('content-length', size)
    .header('content-disposition', inlineDisposition(file.filename))
    .send(stream);
}
