import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { asAppError } from '../../db/outage.js';
import { errors } from '../../errors.js';
import {
  actorOf,
  clearSessionCookie,
  requestOrigin,
  sessionCookieOptions,
  setSessionCookie,
} from '../../http/auth.js';
import { ErrorRef, errorResponses, type HeaderDoc, Success, withHeaders } from '../../http/schemas.js';
import { AuthStatus } from '../../shared/api/people.js';
import { PAGE_SECURITY_HEADERS, renderMessagePage } from '../sharing/page.js';
import { HtmlPage } from '../sharing/schemas.js';
import {
  ChangePasswordBody,
  LoginBody,
  SetupBody,
  SignOnCallbackQuery,
  SignOnStartQuery,
} from './schemas.js';

/** Login attempts per client IP per minute (D-AUTH-3). */
export const LOGIN_RATE_LIMIT = 10;
/** Single sign-on redirects and callbacks per client IP per minute (a household behind one address). */
const SIGN_ON_RATE_LIMIT = 60;

const NewSessionCookie: HeaderDoc = {
  type: 'string',
  description: 'The `session` cookie (HttpOnly, SameSite=Lax, 30 days; Secure over HTTPS)',
};
const SignedIn = withHeaders(Success, { 'set-cookie': NewSessionCookie });

/** The cookie that ties a sign-on's callback to the browser that started it (its `state`). */
const SIGN_ON_COOKIE = 'oidc_state';
const SIGN_ON_COOKIE_PATH = '/api/auth/oidc';
const CALLBACK_PATH = '/api/auth/oidc/callback';

const Redirect = (description: string, headers: Record<string, HeaderDoc>) => ({
  description,
  headers: { location: { type: 'string' as const, description: 'Where the browser goes next' }, ...headers },
  type: 'null' as const,
});

/** A browser arrives at the sign-on routes, not a script: it gets a page that says what went wrong. */
function renderSignOnError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const known = asAppError(error);
  if (known?.headers) reply.headers(known.headers);
  const status =
    known?.statusCode ?? (error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500);
  if (status >= 500 && !known) request.log.error({ err: error }, 'single sign-on failed');
  const message =
    known?.message ??
    (status < 500 ? error.message : 'Something went wrong on the server. Please try again later.');
  reply.clearCookie(SIGN_ON_COOKIE, { path: SIGN_ON_COOKIE_PATH });
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(
      renderMessagePage('Sign-in did not work', message, { href: '/', text: 'Back to the sign-in screen' }),
    );
}

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

  // Nothing to guess here: the limit bounds the pending sign-ons and the requests to the provider.
  const signOnRoute = {
    config: {
      auth: 'public',
      rateLimit: { max: SIGN_ON_RATE_LIMIT, timeWindow: '1 minute' },
      securityHeaders: PAGE_SECURITY_HEADERS,
    },
    errorHandler: renderSignOnError,
  } as const;
  // The provider redirects to this server's public origin, as registered there (docs/deploy.md).
  const redirectUri = (request: FastifyRequest) =>
    `${app.appConfig.publicUrl ?? requestOrigin(request)}${CALLBACK_PATH}`;
  const singleSignOn = () => {
    if (!app.services.singleSignOn) throw errors.ssoNotConfigured();
    return app.services.singleSignOn;
  };

  app.get(
    '/api/auth/oidc/login',
    {
      ...signOnRoute,
      schema: {
        tags,
        summary: 'Single sign-on: go to the identity provider (a link for browsers)',
        description:
          'Redirects to the OpenID provider (authorization code flow with PKCE, `state` and `nonce`); `returnTo` is a path of this site to land on afterwards. Errors are HTML pages.',
        querystring: SignOnStartQuery,
        response: {
          302: Redirect('To the provider', {
            'set-cookie': { type: 'string', description: 'The `oidc_state` cookie (HttpOnly, 10 minutes)' },
          }),
          400: HtmlPage,
          404: HtmlPage,
          429: HtmlPage,
          503: HtmlPage,
        },
      },
    },
    async (request, reply) => {
      const started = await singleSignOn().begin(redirectUri(request), request.query.returnTo);
      // Lax like the session's: the provider's redirect back is a top-level navigation.
      reply.setCookie(SIGN_ON_COOKIE, started.state, {
        ...sessionCookieOptions(request),
        path: SIGN_ON_COOKIE_PATH,
        maxAge: started.maxAgeSeconds,
      });
      return reply.header('cache-control', 'no-store').redirect(started.url, 302);
    },
  );

  app.get(
    CALLBACK_PATH,
    {
      ...signOnRoute,
      schema: {
        tags,
        summary: 'Single sign-on: where the identity provider sends the browser back',
        description:
          'Checks `state` against the `oidc_state` cookie, exchanges the code, verifies the ID token and signs in (the same `session` cookie as a password sign-in), then redirects to the `returnTo` path. Refusals are HTML pages.',
        querystring: SignOnCallbackQuery,
        response: {
          302: Redirect('Signed in: to the app', { 'set-cookie': NewSessionCookie }),
          400: HtmlPage,
          403: HtmlPage,
          404: HtmlPage,
          429: HtmlPage,
          503: HtmlPage,
        },
      },
    },
    async (request, reply) => {
      const callbackUrl = new URL(redirectUri(request));
      callbackUrl.search = new URL(request.url, 'http://callback.invalid').search;
      const done = await singleSignOn().complete(callbackUrl, request.cookies[SIGN_ON_COOKIE]);
      reply.clearCookie(SIGN_ON_COOKIE, { path: SIGN_ON_COOKIE_PATH });
      setSessionCookie(request, reply, done.session);
      return reply.header('cache-control', 'no-store').redirect(done.returnTo, 302);
    },
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
