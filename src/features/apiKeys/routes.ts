import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.js';
import { errorResponses, Success } from '../../http/schemas.js';
import { CreatedApiKey } from '../../shared/api/apiKeys.js';
import { ApiKeyIdParams, CreateApiKeyBody } from './schemas.js';

/** Key management needs the session: a key can neither mint nor revoke keys (D-KEY-2). */
export const apiKeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { apiKeys } = app.services;
  const tags = ['api keys'];
  const config = { auth: 'session' as const };

  app.get(
    '/api/settings/api-keys',
    {
      config,
      schema: {
        tags,
        summary: 'Your API keys, newest first (never the keys themselves)',
        response: { 200: Type.Array(Type.Ref('ApiKey')), ...errorResponses(401) },
      },
    },
    async (request) => apiKeys.list(actorOf(request)),
  );

  app.post(
    '/api/settings/api-keys',
    {
      config,
      schema: {
        tags,
        summary: 'Create a key; the full key is in this response only',
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKey, ...errorResponses(400, 401, 403, 413) },
      },
    },
    async (request, reply) => reply.code(201).send(await apiKeys.create(actorOf(request), request.body)),
  );

  app.delete(
    '/api/settings/api-keys/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Revoke a key; it stops working at once, with its MCP sessions',
        params: ApiKeyIdParams,
        response: { 200: Success, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await apiKeys.revoke(actorOf(request), request.params.id);
      return { success: true };
    },
  );
};
