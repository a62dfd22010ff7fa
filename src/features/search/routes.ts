import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.js';
import { sendJsonArray } from '../../http/jsonArray.js';
import { errorResponses } from '../../http/schemas.js';
import { NoteList } from '../notes/schemas.js';
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from './service.js';

export const searchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { search } = app.services;

  app.get(
    '/api/search',
    {
      schema: {
        tags: ['search'],
        summary: 'Full-text search over titles, content and tags; trashed notes excluded',
        querystring: Type.Object({
          q: Type.String({
            maxLength: 1_000,
            description: 'Words to find; the last one as a prefix; #word for tags',
          }),
          limit: Type.Optional(
            Type.Integer({ minimum: 1, maximum: MAX_SEARCH_LIMIT, default: DEFAULT_SEARCH_LIMIT }),
          ),
        }),
        response: { 200: NoteList, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) =>
      sendJsonArray(reply, await search.searchInBatches(actorOf(request), request.query)),
  );
};
