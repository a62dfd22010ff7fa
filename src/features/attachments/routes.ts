import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../../http/auth.js';
import { errorResponses, NoteIdParams, Success, withHeaders } from '../../http/schemas.js';
import { sendStoredFile } from './download.js';
import { MAX_UPLOAD_BYTES, MULTIPART_LIMITS, receiveMultipart, uploadTooLarge } from './multipart.js';
import {
  AttachmentList,
  DeleteAttachmentQuery,
  FileETag,
  GetAttachmentsQuery,
  ImageBinary,
  UploadBody,
} from './schemas.js';

export const attachmentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { attachments } = app.services;
  const tags = ['attachments'];
  // Encapsulated here: only this feature's routes accept multipart bodies.
  await app.register(multipart, { limits: MULTIPART_LIMITS });

  // D-ATT-3: before the first request, so no upload is in flight while orphans are swept.
  app.addHook('onReady', async () => {
    const { deletedFiles } = await attachments.sweepOrphans();
    if (deletedFiles > 0) app.log.info({ deletedFiles }, 'deleted attachment files without a row');
  });

  app.get(
    '/api/notes/:id/attachments',
    {
      schema: {
        tags,
        summary: 'List a note’s attachments; with attachmentId send its file, with thumb=1 its thumbnail',
        params: NoteIdParams,
        querystring: GetAttachmentsQuery,
        response: {
          200: withHeaders(
            {
              description: 'The list (JSON), or the file with the stored type (thumbnails: image/webp)',
              content: { 'application/json': { schema: AttachmentList }, 'image/*': { schema: ImageBinary } },
            },
            { etag: { ...FileETag, description: `With attachmentId only. ${FileETag.description}` } },
          ),
          304: { description: 'If-None-Match names the current ETag', type: 'null' },
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request);
      const { attachmentId, thumb } = request.query;
      if (attachmentId === undefined) return reply.send(await attachments.list(actor, request.params.id));
      const file = await attachments.find(actor, request.params.id, attachmentId, thumb === '1');
      return sendStoredFile(request, reply, file, attachments.open);
    },
  );

  app.post(
    '/api/notes/:id/attachments',
    {
      schema: {
        tags,
        summary: 'Attach an image (multipart `file`, at most 10 MiB; optional WebP `thumbnail`)',
        params: NoteIdParams,
        body: UploadBody,
        response: { 201: { $ref: 'Attachment' }, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
      // The whole form; a larger declared Content-Length is refused before anything is read,
      // and a refusal given before the form was read waits for it up to this (src/http/requestBody.ts).
      bodyLimit: MAX_UPLOAD_BYTES,
      config: { bodyTooLarge: uploadTooLarge },
    },
    async (request, reply) => {
      const attachment = await attachments.add(
        actorOf(request),
        request.params.id,
        receiveMultipart(request),
      );
      return reply.code(201).send(attachment);
    },
  );

  app.delete(
    '/api/notes/:id/attachments',
    {
      schema: {
        tags,
        summary: 'Remove an attachment and its files',
        params: NoteIdParams,
        querystring: DeleteAttachmentQuery,
        response: { 200: Success, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await attachments.remove(actorOf(request), request.params.id, request.query.attachmentId);
      return { success: true };
    },
  );
};
