import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { DisplayName, Email, UserProfile } from '../auth/schemas.js';

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { users } = app.services;

  app.patch(
    '/api/users/me',
    {
      config: { auth: 'session' },
      schema: {
        tags: ['users'],
        summary: 'Change your email or display name',
        body: Type.Object({ email: Type.Optional(Email), displayName: Type.Optional(DisplayName) }),
        response: { 200: UserProfile, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request) => users.updateMe(actorOf(request), request.body),
  );
};
