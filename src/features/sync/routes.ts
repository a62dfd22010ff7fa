import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.js';
import { sendJsonTextArray } from '../../http/jsonArray.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { Tombstone } from '../../shared/api/sync.js';
import { NoteList } from '../notes/schemas.js';
import { SinceQuery, SYNC_BODY_LIMIT, SyncPush, SyncPushAnswer, SyncTimeHeader } from './schemas.js';

export const syncRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { sync } = app.services;
  const tags = ['sync'];

  app.get(
    '/api/sync',
    {
      schema: {
        tags,
        summary: 'Notes you can see that changed at or after `since`; X-Sync-Time is your next `since`',
        querystring: SinceQuery,
        response: {
          200: withHeaders(NoteList, { 'x-sync-time': SyncTimeHeader }),
          ...errorResponses(400, 401),
        },
      },
    },
    async (request, reply) => {
      const { syncTime, jsonBatches } = await sync.pullAsJson(actorOf(request), request.query.since);
      return sendJsonTextArray(reply.header('x-sync-time', String(syncTime)), jsonBatches);
    },
  );

  app.get(
    '/api/sync/deleted',
    {
      schema: {
        tags,
        summary: 'Notes deleted, purged or no longer shared with you at or after `since` (kept 90 days)',
        querystring: SinceQuery,
        response: {
          200: withHeaders(Type.Array(Tombstone), { 'x-sync-time': SyncTimeHeader }),
          ...errorResponses(400, 401, 410),
        },
      },
    },
    async (request, reply) => {
      const { syncTime, deleted } = await sync.deleted(actorOf(request), request.query.since);
      return reply.header('x-sync-time', String(syncTime)).send(deleted);
    },
  );

  app.post(
    '/api/sync',
    {
      bodyLimit: SYNC_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Push a batch of local changes: validated whole, applied in one transaction',
        body: SyncPush,
        response: { 200: SyncPushAnswer, ...errorResponses(400, 401, 403, 413) },
      },
    },
    async (request) => ({ success: true, results: await sync.push(actorOf(request), request.body.changes) }),
  );
};
