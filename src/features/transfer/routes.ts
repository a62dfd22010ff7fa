import path from 'node:path';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import { actorOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { ImportSummary } from '../../shared/api/transfer.js';
import { asClientError, saveLimited } from '../attachments/multipart.js';
import { ImportBody, ZipBinary } from './schemas.js';
import { MAX_IMPORT_BYTES, type ReceiveArchive } from './service.js';

/** Room for the form's boundary and part headers next to the archive. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
const LIMITS = {
  fileSize: MAX_IMPORT_BYTES,
  files: 1,
  fields: 8,
  fieldSize: 1024,
  parts: 10,
  headerPairs: 32,
};
const tooLarge = () => errors.archiveTooLarge(MAX_IMPORT_BYTES);

/**
 * Reads the multipart `file` part of POST /api/import into `directory`; other parts are skipped.
 * (A declared Content-Length beyond the route's bodyLimit never gets here: src/http/requestBody.ts
 * refuses it first; a chunked body stops at busboy's fileSize.)
 */
function receiveArchive(request: FastifyRequest): ReceiveArchive {
  return async (directory) => {
    let received: string | undefined;
    try {
      for await (const part of request.parts({ limits: LIMITS })) {
        if (part.type !== 'file' || part.fieldname !== 'file' || received) {
          if (part.type === 'file') {
            part.file.resume();
            await finished(part.file);
          }
          continue;
        }
        received = (await saveLimited(part.file, path.join(directory, 'archive.zip'), tooLarge)).path;
      }
    } catch (err) {
      throw asClientError(err);
    }
    if (!received) throw errors.invalidArchive('The multipart field `file` is missing');
    return received;
  };
}

/** The export as a download; chunked, as it is written while it is sent. */
function sendZip(reply: FastifyReply, zip: Readable): FastifyReply {
  const day = new Date().toISOString().slice(0, 10);
  return reply
    .type('application/zip')
    .header('content-disposition', `attachment; filename="notes-export-${day}.zip"`)
    .send(zip);
}

export const transferRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { transfer } = app.services;
  const tags = ['import and export'];
  // Encapsulated here: only this feature's routes accept these (large) multipart bodies.
  await app.register(multipart, { limits: LIMITS });

  app.get(
    '/api/export',
    {
      schema: {
        tags,
        summary: 'Your own notes as a zip: notes.json, Markdown files with front matter, attachments',
        response: {
          200: { description: 'The zip, streamed', content: { 'application/zip': { schema: ZipBinary } } },
          ...errorResponses(401),
        },
      },
    },
    async (request, reply) => sendZip(reply, await transfer.exportNotes(actorOf(request))),
  );

  app.post(
    '/api/import',
    {
      schema: {
        tags,
        summary:
          'Import our export, a Google Keep Takeout or Markdown files (multipart `file`, at most 256 MiB)',
        body: ImportBody,
        response: { 200: ImportSummary, ...errorResponses(400, 401, 403, 413, 415) },
      },
      // The whole form, not the 2 MiB of a JSON body (app.ts): larger is 413 archive_too_large.
      bodyLimit: MAX_IMPORT_BYTES + FORM_OVERHEAD_BYTES,
      config: { bodyTooLarge: tooLarge },
    },
    async (request) => transfer.importArchive(actorOf(request), receiveArchive(request)),
  );
};
