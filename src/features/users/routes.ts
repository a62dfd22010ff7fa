import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.js';
import { errorResponses, Success } from '../../http/schemas.js';
import { CreateUserBody, UpdateMeBody, UserIdParams, UserSearchQuery } from './schemas.js';

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { users } = app.services;
  const tags = ['users'];

  // By session or API key (D-KEY-2: reading your own profile is not account management).
  app.get(
    '/api/users/me',
    {
      schema: {
        tags,
        summary: 'Your profile: who this session or API key acts as',
        response: { 200: Type.Ref('UserProfile'), ...errorResponses(401) },
      },
    },
    async (request) => users.me(actorOf(request)),
  );

  app.patch(
    '/api/users/me',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        summary: 'Change your email or display name',
        body: UpdateMeBody,
        response: { 200: Type.Ref('UserProfile'), ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request) => users.updateMe(actorOf(request), request.body),
  );

  // User administration needs the owner's session; API keys are not accepted (D-KEY-2).
  app.post(
    '/api/users',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        summary: 'Add a user (owner only)',
        body: CreateUserBody,
        response: { 201: Type.Ref('UserSummary'), ...errorResponses(400, 401, 403, 409, 413) },
      },
    },
    async (request, reply) => reply.code(201).send(await users.create(actorOf(request), request.body)),
  );

  app.get(
    '/api/users',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        summary: 'List every user (owner only)',
        response: { 200: Type.Array(Type.Ref('UserProfile')), ...errorResponses(401, 403) },
      },
    },
    async (request) => users.list(actorOf(request)),
  );

  app.delete(
    '/api/users/:id',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        summary: 'Remove a user with their notes, attachments, sessions and keys (owner only)',
        params: UserIdParams,
        response: { 200: Success, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await users.remove(actorOf(request), request.params.id);
      return { success: true };
    },
  );

  app.get(
    '/api/users/search',
    {
      schema: {
        tags,
        summary: 'Find other users by part of their email or display name (at most 20)',
        querystring: UserSearchQuery,
        response: { 200: Type.Array(Type.Ref('UserSummary')), ...errorResponses(400, 401) },
      },
    },
    async (request) => users.search(actorOf(request), request.query.q),
  );
};
