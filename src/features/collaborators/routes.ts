import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../../http/auth.js';
import { errorResponses, NoteIdParams, Success } from '../../http/schemas.js';
import { AddCollaboratorBody, CollaboratorList, RemoveCollaboratorQuery } from './schemas.js';

export const collaboratorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { collaborators } = app.services;
  const tags = ['collaboration'];

  app.get(
    '/api/notes/:id/collaborators',
    {
      schema: {
        tags,
        summary: "List a note's collaborators (owner or collaborator)",
        params: NoteIdParams,
        response: { 200: CollaboratorList, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => collaborators.list(actorOf(request), request.params.id),
  );

  app.post(
    '/api/notes/:id/collaborators',
    {
      schema: {
        tags,
        summary: 'Share a note with a user (owner only); answers the full list',
        params: NoteIdParams,
        body: AddCollaboratorBody,
        response: { 201: CollaboratorList, ...errorResponses(400, 401, 403, 404, 409, 413) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await collaborators.add(actorOf(request), request.params.id, request.body.userId)),
  );

  app.delete(
    '/api/notes/:id/collaborators',
    {
      schema: {
        tags,
        summary: 'Remove a collaborator (owner), or leave the note with userId=self (collaborator)',
        params: NoteIdParams,
        querystring: RemoveCollaboratorQuery,
        response: { 200: Success, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { userId } = request.query;
      await collaborators.remove(
        actorOf(request),
        request.params.id,
        userId === 'self' ? 'self' : Number(userId),
      );
      return { success: true };
    },
  );
};
