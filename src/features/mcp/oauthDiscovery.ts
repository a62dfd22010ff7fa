import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../../http/errorHandler.js';

/**
 * Answers for MCP clients that take the 401 of a wrong or revoked key as "sign in with OAuth"
 * (docs/decisions/0011-mcp-wrong-key-answer.md). This server has no OAuth: the 401 itself stays
 * as D-MCP-2 says, and the documents and the registration endpoint such a client then looks for
 * (RFC 9728 protected resource metadata, RFC 8414 / OpenID Connect discovery, and the
 * `/register` fallback of MCP 2025-03-26) answer 404 with a message the client shows its user.
 */
const OAUTH_DOCUMENTS = ['oauth-protected-resource', 'oauth-authorization-server', 'openid-configuration'];

const OAUTH_NOT_SUPPORTED_MESSAGE =
  'This server does not use OAuth: MCP clients send an API key as the header ' +
  '"Authorization: Bearer nsk_…". The key sent was missing, wrong or revoked; create one in the ' +
  "notes app's settings (POST /api/settings/api-keys) and check the client's header option";

/**
 * The D-ERR-1 body plus OAuth's `error_description` (RFC 6749 §5.2), which is what OAuth clients
 * print: the MCP SDK reads a body with a string `error` as an OAuth error and shows only that field.
 */
const OAUTH_NOT_SUPPORTED_BODY = {
  ...errorBody(404, 'oauth_not_supported', OAUTH_NOT_SUPPORTED_MESSAGE),
  error_description: OAUTH_NOT_SUPPORTED_MESSAGE,
};

async function oauthNotSupported(_request: FastifyRequest, reply: FastifyReply) {
  return reply.code(404).send(OAUTH_NOT_SUPPORTED_BODY);
}

export const oauthDiscoveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const route = { config: { auth: 'public' as const }, schema: { hide: true } };
  for (const document of OAUTH_DOCUMENTS) {
    // Clients ask for the document of the MCP path first (/…/api/mcp), then the origin's.
    app.get(`/.well-known/${document}`, route, oauthNotSupported);
    app.get(`/.well-known/${document}/*`, route, oauthNotSupported);
  }
  app.post('/register', route, oauthNotSupported);
};
