import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.js';
import { eventStream } from '../../http/eventStream.js';
import { errorResponses, NoteIdParams } from '../../http/schemas.js';
import { NotesEventData, PresenceBody, PresenceEventData } from '../../shared/api/live.js';
import type { Credential, LiveEvent } from './service.js';

/**
 * Server-Sent Events framing (the WHATWG HTML "server-sent events" format), written by hand over
 * the raw response: an event is `event:`, `id:` and one `data:` line of JSON; a comment line
 * starts with `:` (decision 0033).
 */
function frame(event: LiveEvent): string {
  const data =
    event.type === 'notes'
      ? JSON.stringify({ ids: event.ids })
      : event.type === 'presence'
        ? JSON.stringify({ noteId: event.noteId, userId: event.userId, name: event.name, here: event.here })
        : '{}';
  return `event: ${event.type}\nid: ${event.id}\ndata: ${data}\n\n`;
}

export const liveRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { live } = app.services;

  app.post(
    '/api/notes/:id/presence',
    {
      schema: {
        tags: ['sync'],
        summary: "Say that you opened or closed a note: its other users' live streams get `event: presence`",
        description:
          'No state is kept: a client showing who is here says so again while the note stays open ' +
          '(the web app every 30 s, and when someone else arrives). See docs/sync.md#presence.',
        params: NoteIdParams,
        body: PresenceBody,
        response: { 204: { type: 'null', description: 'Told' }, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await live.announce(actorOf(request), request.params.id, request.body.here);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/events',
    {
      schema: {
        tags: ['sync'],
        summary: 'Live hints: a Server-Sent Events stream naming the notes that changed for you',
        description:
          'Hints only: pull (GET /api/sync) when one arrives. `event: notes` with `data` {"ids": [...]}; ' +
          '`event: resync` when hints were missed (pull from your cursor); `event: presence` with ' +
          '{"noteId", "userId", "name", "here"} when someone else opens or closes a note you can see ' +
          '(POST /api/notes/{id}/presence); a comment at least every 25 s. ' +
          'Reconnect with `Last-Event-ID` to get the hints you missed. 429 past 32 streams per user ' +
          '(EVENTS_MAX_STREAMS_PER_USER). See docs/sync.md#live-hints.',
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({
              pattern: '^[A-Za-z0-9_-]{1,16}\\.[0-9]{1,15}$',
              description: 'The id of the last event received (the form this server sends, else 400)',
            }),
          ),
        }),
        response: {
          200: {
            description: 'An endless text/event-stream',
            content: { 'text/event-stream': { schema: Type.Union([NotesEventData, PresenceEventData]) } },
          },
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request);
      const credential: Credential =
        actor.keyId !== undefined
          ? { kind: 'key', keyId: actor.keyId }
          : { kind: 'session', tokenHash: request.sessionTokenHash! };
      const stream = eventStream(reply);
      const close = live.open(actor, credential, request.headers['last-event-id'], {
        send: (event) => stream.write(frame(event)),
        keepAlive: () => stream.keepAlive(),
        end: () => stream.end(),
      });
      return stream.send(close);
    },
  );
};
