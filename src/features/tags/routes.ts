import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { Tag } from './schemas.js';

export const tagRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { tags } = app.services;

  app.get(
    '/api/tags',
    {
      schema: {
        tags: ['tags'],
        summary: 'Tags used by your visible, not trashed notes, by name',
        response: { 200: Type.Array(Tag), ...errorResponses(401) },
      },
    },
    async (request) => tags.list(actorOf(request)),
  );
};
