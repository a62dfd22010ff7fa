import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, requestOrigin } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import {
  DoneInput,
  EndpointQuery,
  FeedParams,
  FeedUrl,
  ListedReminder,
  PublicKey,
  PushSubscriptionInput,
  ReminderParams,
} from './schemas.js';

/** Where the web app opens a note: the link a calendar event and a notification carry. */
const noteLink = (origin: string, noteId: string) => `${origin}/?note=${encodeURIComponent(noteId)}`;

export const reminderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { reminders, push } = app.services;
  const tags = ['reminders'];
  const publicUrl = app.appConfig.publicUrl;

  app.get(
    '/api/reminders',
    {
      schema: {
        tags,
        summary: 'Your reminders, the next to ring first (those that will not ring again last)',
        response: { 200: Type.Array(ListedReminder), ...errorResponses(401) },
      },
    },
    async (request) => reminders.list(actorOf(request)),
  );

  app.post(
    '/api/reminders/:noteId/done',
    {
      schema: {
        tags,
        summary:
          'A notification\'s "Done": removes a one-off reminder that rang at dueAt (a repeat goes on); idempotent',
        params: ReminderParams,
        body: DoneInput,
        response: { 204: { type: 'null', description: 'Done' }, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await reminders.done(actorOf(request), request.params.noteId, request.body.dueAt);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/reminders/feed',
    {
      schema: {
        tags,
        summary: 'A new secret iCalendar URL of your reminders; the previous one stops working',
        response: { 200: FeedUrl, ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const token = await reminders.createFeed(actorOf(request));
      return { url: `${publicUrl ?? requestOrigin(request)}/api/reminders/feed/${token}` };
    },
  );

  app.delete(
    '/api/reminders/feed',
    {
      schema: {
        tags,
        summary: 'Stop the calendar feed: its URL answers 404 from now on',
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      await reminders.deleteFeed(actorOf(request));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/reminders/feed/:token',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'The calendar feed (text/calendar, RFC 5545); the secret URL is the credential',
        params: FeedParams,
        response: {
          200: { description: 'iCalendar', content: { 'text/calendar': { schema: { type: 'string' } } } },
          ...errorResponses(404),
        },
      },
    },
    async (request, reply) => {
      const origin = publicUrl ?? requestOrigin(request);
      const calendar = await reminders.feed(request.params.token, (noteId) => noteLink(origin, noteId));
      return reply
        .type('text/calendar; charset=utf-8')
        .header('cache-control', 'private, no-store')
        .send(calendar);
    },
  );

  app.get(
    '/api/push/public-key',
    {
      schema: {
        tags,
        summary: "The server's VAPID public key: the applicationServerKey to subscribe with",
        response: { 200: PublicKey, ...errorResponses(401) },
      },
    },
    async () => ({ publicKey: await push.publicKey() }),
  );

  app.post(
    '/api/push/subscriptions',
    {
      schema: {
        tags,
        summary: "Register a browser's PushSubscription for your reminders (again: no change)",
        body: PushSubscriptionInput,
        response: { 201: { type: 'null', description: 'Subscribed' }, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      await reminders.subscribe(actorOf(request), request.body);
      return reply.code(201).send(null);
    },
  );

  app.delete(
    '/api/push/subscriptions',
    {
      schema: {
        tags,
        summary: 'Forget a push subscription of yours',
        querystring: EndpointQuery,
        response: { 204: { type: 'null', description: 'Forgotten' }, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      await reminders.unsubscribe(actorOf(request), request.query.endpoint);
      return reply.code(204).send(null);
    },
  );
};
