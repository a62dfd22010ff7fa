import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { matchesEtag } from '../../http/conditional.js';
import { inlineDisposition } from './filenames.js';
import type { StoredFile } from './service.js';

/** Content never changes under an attachment id, so a private cache may keep it for a year. */
const CACHE_CONTROL = 'private, max-age=31536000, immutable';

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
