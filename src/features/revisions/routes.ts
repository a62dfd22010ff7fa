import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../../http/auth.js';
import { errorResponses, NoteIdParams } from '../../http/schemas.js';
import { NoteRevisionList } from './schemas.js';

export const revisionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { revisions } = app.services;

  app.get(
    '/api/notes/:id/revisions',
    {
      schema: {
        tags: ['notes'],
        summary: "The note's earlier titles and contents, newest first; restore one by PATCHing its text",
        params: NoteIdParams,
        response: { 200: NoteRevisionList, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => revisions.list(actorOf(request), request.params.id),
  );
};
