import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../../http/auth.js';
import { sendJsonTextArray } from '../../http/jsonArray.js';
import { errorResponses } from '../../http/schemas.js';
import { NoteList } from '../notes/schemas.js';
import { SearchQuery } from './schemas.js';

export const searchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { search } = app.services;

  app.get(
    '/api/search',
    {
      schema: {
        tags: ['search'],
        summary: 'Full-text search over titles, content and tags; trashed notes excluded',
        querystring: SearchQuery,
        response: { 200: NoteList, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) =>
      sendJsonTextArray(reply, await search.searchAsJson(actorOf(request), request.query)),
  );
};
