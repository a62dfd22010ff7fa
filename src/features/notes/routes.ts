import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors } from '../../errors.js';
import { actorOf } from '../../http/auth.js';
import { matchesEtag } from '../../http/conditional.js';
import { sendJsonTextArray } from '../../http/jsonArray.js';
import { errorResponses, NoteIdParams, Success, withHeaders } from '../../http/schemas.js';
import { NoteInput } from '../../shared/api/notes.js';
import { IfMatchHeaders, ListETag, ListNotesQuery, NoteETag, NoteList } from './schemas.js';

/**
 * The version `If-Match` asks for (D-NOTE-3); undefined for none, and for `*`, which matches any
 * current version (RFC 9110 §13.1.1): the note must exist, which every write checks anyway.
 */
function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const match = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(header);
  if (!match) throw errors.invalidIfMatch();
  return Number(match[1]);
}

/** One note, sent with its version as the ETag. */
const NoteRef = withHeaders({ $ref: 'Note' } as const, { etag: NoteETag });

export const noteRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { notes } = app.services;
  const tags = ['notes'];

  app.get(
    '/api/notes',
    {
      schema: {
        tags,
        summary: 'List notes: pinned first, then sortOrder, then most recently updated',
        querystring: ListNotesQuery,
        response: {
          200: withHeaders(NoteList, { etag: ListETag }),
          304: { description: 'If-None-Match names the current ETag: the list is unchanged', type: 'null' },
          ...errorResponses(400, 401),
        },
      },
    },
    async (request, reply) => {
      const { etag, json } = await notes.listAsJson(actorOf(request), request.query);
      reply.header('etag', etag);
      if (matchesEtag(request.headers['if-none-match'], etag)) return reply.code(304).send(null);
      return sendJsonTextArray(reply, await json());
    },
  );

  app.post(
    '/api/notes',
    {
      schema: {
        tags,
        summary: 'Create a note; every field is optional',
        body: NoteInput,
        response: { 201: NoteRef, ...errorResponses(400, 401, 403, 409, 413) },
      },
    },
    async (request, reply) => {
      const note = await notes.create(actorOf(request), request.body);
      return reply.code(201).header('etag', `"${note.version}"`).send(note);
    },
  );

  app.get(
    '/api/notes/:id',
    {
      schema: {
        tags,
        summary: 'Get a note; the ETag is its version',
        params: NoteIdParams,
        response: { 200: NoteRef, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { version, json } = await notes.getJson(actorOf(request), request.params.id);
      // UTF-8 JSON already (the list's cached answer): sent as it is, not serialized again.
      return reply.header('etag', `"${version}"`).type('application/json; charset=utf-8').send(json);
    },
  );

  app.patch(
    '/api/notes/:id',
    {
      schema: {
        tags,
        summary: 'Change some fields; with If-Match, only if the version still matches',
        params: NoteIdParams,
        headers: IfMatchHeaders,
        body: NoteInput,
        response: { 200: NoteRef, ...errorResponses(400, 401, 403, 404, 412, 413) },
      },
    },
    async (request, reply) => {
      const ifMatch = parseIfMatch(request.headers['if-match']);
      const note = await notes.update(actorOf(request), request.params.id, request.body, ifMatch);
      return reply.header('etag', `"${note.version}"`).send(note);
    },
  );

  app.delete(
    '/api/notes/:id',
    {
      schema: {
        tags,
        summary: 'Delete a note permanently (owner only)',
        params: NoteIdParams,
        headers: IfMatchHeaders,
        response: { 200: Success, ...errorResponses(400, 401, 403, 404, 412) },
      },
    },
    async (request) => {
      await notes.remove(actorOf(request), request.params.id, parseIfMatch(request.headers['if-match']));
      return { success: true };
    },
  );
};
