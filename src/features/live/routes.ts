import { PassThrough } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.js';
import { errorResponses, NoteIdParams } from '../../http/schemas.js';
import { NotesEventData, PresenceBody, PresenceEventData } from '../../shared/api/live.js';
import type { Credential, LiveEvent } from './service.js';

/** What the client waits before reconnecting, sent first (EventSource honours it). */
const RETRY_MS = 2_000;
/**
 * A stream whose client reads slower than this many bytes pile up is closed: memory stays
 * bounded, and the client's reconnection with Last-Event-ID gets what it missed (or resync).
 */
const MAX_BUFFERED_BYTES = 256 * 1024;

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
      // A stream body, so that the usual hooks still add their headers (a renewed session cookie, CORS).
      const body = new PassThrough();
      const write = (text: string) => {
        if (reply.raw.writableLength + body.writableLength > MAX_BUFFERED_BYTES) body.destroy();
        else body.write(text);
      };
      body.write(`retry: ${RETRY_MS}\n\n`);
      const close = live.open(actor, credential, request.headers['last-event-id'], {
        send: (event) => write(frame(event)),
        keepAlive: () => write(':\n\n'),
        end: () => body.end(),
      });
      body.on('close', close);
      reply.raw.on('close', () => body.destroy());
      return (
        (reply as FastifyReply)
          .header('content-type', 'text/event-stream; charset=utf-8')
          .header('cache-control', 'no-store')
          // nginx buffers responses unless told otherwise (docs/deploy.md).
          .header('x-accel-buffering', 'no')
          .send(body)
      );
    },
  );
};
