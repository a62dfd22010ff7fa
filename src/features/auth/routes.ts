import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, clearSessionCookie, setSessionCookie } from '../../http/auth.js';
import { ErrorRef, errorResponses, type HeaderDoc, Success, withHeaders } from '../../http/schemas.js';
import { AuthStatus, ChangePasswordBody, LoginBody, SetupBody } from './schemas.js';

/** Login attempts per client IP per minute (D-AUTH-3). */
export const LOGIN_RATE_LIMIT = 10;

const NewSessionCookie: HeaderDoc = {
  type: 'string',
  description: 'The `session` cookie (HttpOnly, SameSite=Lax, 30 days; Secure over HTTPS)',
};
const SignedIn = withHeaders(Success, { 'set-cookie': NewSessionCookie });

export const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { auth } = app.services;
  const tags = ['auth'];
  // Setup and login take a password: public, and rate limited per IP (D-AUTH-3).
  const credentialRoute = {
    auth: 'public',
    rateLimit: { max: LOGIN_RATE_LIMIT, timeWindow: '1 minute' },
  } as const;

  app.post(
    '/api/auth/setup',
    {
      config: credentialRoute,
      schema: {
        tags,
        summary: 'Create the owner account (works once)',
        body: SetupBody,
        response: { 201: SignedIn, ...errorResponses(400, 403, 413, 429) },
      },
    },
    async (request, reply) => {
      const session = await auth.setup(request.body);
      setSessionCookie(request, reply, session);
      return reply.code(201).send({ success: true });
    },
  );

  app.post(
    '/api/auth/login',
    {
      config: credentialRoute,
      schema: {
        tags,
        summary: 'Sign in; without email, as the owner',
        body: LoginBody,
        response: { 200: SignedIn, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const session = await auth.login(request.body);
      setSessionCookie(request, reply, session);
      return { success: true };
    },
  );

  app.post(
    '/api/auth/logout',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        summary: 'End this session',
        response: {
          200: withHeaders(Success, {
            'set-cookie': { type: 'string', description: 'Clears the `session` cookie' },
          }),
          401: ErrorRef,
        },
      },
    },
    async (request, reply) => {
      if (request.sessionTokenHash) await auth.logout(request.sessionTokenHash);
      clearSessionCookie(request, reply);
      return { success: true };
    },
  );

  app.get(
    '/api/auth/status',
    {
      config: { auth: 'optional' },
      schema: {
        tags,
        summary: 'Whether setup is needed and who is signed in',
        response: { 200: AuthStatus },
      },
    },
    async (request) => auth.status(request.actor),
  );

  app.post(
    '/api/auth/password',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        summary: 'Change the password; ends every other session',
        body: ChangePasswordBody,
        response: { 200: Success, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      await auth.changePassword(actorOf(request), request.sessionTokenHash, request.body);
      return { success: true };
    },
  );
};
