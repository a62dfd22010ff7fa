import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { freePort } from '../../bench/processes.js';
import { startServer, type TestServer } from './server.js';

/** An account at the test provider; its id is what one types as the login at its sign-in page. */
export interface ProviderAccount {
  email?: string;
  emailVerified?: boolean;
  name?: string;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, ProviderAccount>;
  close(): Promise<void>;
}

/**
 * A real OpenID provider (oidc-provider, the certified implementation) on 127.0.0.1, with one
 * confidential client whose redirect URI is `redirectUri`, and its development sign-in pages:
 * any login with any password signs in as the account of that id. Consent is implied (a grant
 * of the requested scopes), as a household's provider usually configures it for its own apps.
 */
export async function startTestProvider(
  redirectUri: string,
  accounts: Record<string, ProviderAccount>,
  options: { port?: number } = {},
): Promise<TestProvider> {
  const server = http.createServer();
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const known = new Map(Object.entries(accounts));
  const clientId = 'notes';
  const clientSecret = 'a-test-client-secret-of-enough-length';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
    cookies: { keys: ['test-cookie-key-1'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      const account = known.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        async claims() {
          return {
            sub: id,
            ...(account.email
              ? { email: account.email, email_verified: account.emailVerified ?? false }
              : {}),
            ...(account.name ? { name: account.name } : {}),
          };
        },
      };
    },
    async loadExistingGrant(ctx) {
      const grantId =
        ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId,
      });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  // The development pages warn on every start; the tests know.
  provider.on('server_error', () => {});
  server.on('request', provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    accounts: known,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export interface ServerWithProvider {
  server: TestServer;
  provider: TestProvider;
}

/** A notes server whose single sign-on goes to a test provider of these accounts (display name "Household ID"). */
export async function startServerWithProvider(
  accounts: Record<string, ProviderAccount>,
  env: Record<string, string> = {},
): Promise<ServerWithProvider> {
  const port = await freePort();
  const provider = await startTestProvider(`http://127.0.0.1:${port}/api/auth/oidc/callback`, accounts);
  const server = await startServer({
    port,
    env: {
      OIDC_ISSUER_URL: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_CLIENT_SECRET: provider.clientSecret,
      OIDC_DISPLAY_NAME: 'Household ID',
      ...env,
    },
  });
  return { server, provider };
}
