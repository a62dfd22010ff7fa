/** What the provider vouches for, once its ID token is verified (claims of OpenID Connect Core 5.1). */
export interface VerifiedIdentity {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}

/** What a sign-on checks when the browser comes back (kept server side between the two requests). */
export interface SignOnChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The OpenID provider as the single sign-on service uses it; openid-client does the protocol. */
export interface IdentityProvider {
  /** Whether discovery has succeeded: until then every sign-on answers `sso_unavailable`. */
  ready(): boolean;
  /** Where to send the browser: authorization code flow with PKCE (S256), state and nonce. */
  authorizationUrl(redirectUri: string, checks: SignOnChecks): Promise<string>;
  /**
   * Checks the callback URL (state, issuer), exchanges its code (with the PKCE verifier) and
   * verifies the ID token (signature, audience, expiry, nonce); throws when anything fails.
   * The provider's tokens go no further than this function.
   */
  exchange(callbackUrl: URL, checks: SignOnChecks): Promise<VerifiedIdentity>;
  /** Stops retrying discovery (the app closes). */
  close(): void;
}

export interface IdentityProviderOptions {
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  /** The app's logger: discovery says when the provider cannot be reached, and when it can again. */
  log: { info(details: object, message: string): void; error(details: object, message: string): void };
  /** Milliseconds between discovery attempts: doubled after each failure, up to the last. */
  retryDelaysMs?: readonly number[];
}

const RETRY_DELAYS_MS = [1000, 2000, 5000, 10_000, 30_000, 60_000];
/** Seconds any request to the provider may take (openid-client's default is 30). */
const PROVIDER_TIMEOUT_SECONDS = 10;

/**
 * Discovers the provider in the background: the server starts whether or not the provider
 * answers, logs once when it cannot be reached (and again when it can), and retries with
 * growing delays until it succeeds. openid-client (ESM, ~100 KB with jose) is loaded only when
 * single sign-on is configured.
 */
export async function openIdentityProvider(options: IdentityProviderOptions): Promise<IdentityProvider> {
  const client = await import('openid-client');
  const delays = options.retryDelaysMs ?? RETRY_DELAYS_MS;
  const issuer = new URL(options.issuerUrl);
  // http only for a provider on a private network or this machine (docs/deploy.md).
  const execute = issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [];
  let configuration: InstanceType<typeof client.Configuration> | null = null;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  async function discover(): Promise<void> {
    try {
      configuration = await client.discovery(
        issuer,
        options.clientId,
        undefined,
        client.ClientSecretBasic(options.clientSecret),
        { execute, timeout: PROVIDER_TIMEOUT_SECONDS },
      );
      if (attempt > 0)
        options.log.info({ issuer: issuer.href }, 'single sign-on: the provider is reachable now');
    } catch (err) {
      const delay = delays[Math.min(attempt, delays.length - 1)]!;
      if (attempt === 0) {
        options.log.error(
          { issuer: issuer.href, reason: describeError(err) },
          `single sign-on: the provider at ${issuer.href} cannot be reached (discovery failed); sign-ons answer 503 until it can, retrying`,
        );
      }
      attempt++;
      if (!closed) {
        timer = setTimeout(discover, delay);
        timer.unref();
      }
    }
  }
  await discover();

  function required() {
    if (!configuration) throw new Error('single sign-on: discovery has not succeeded');
    return configuration;
  }

  return {
    ready: () => configuration !== null,

    async authorizationUrl(redirectUri, checks) {
      const url = client.buildAuthorizationUrl(required(), {
        redirect_uri: redirectUri,
        scope: options.scopes,
        response_type: 'code',
        code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
        state: checks.state,
        nonce: checks.nonce,
      });
      return url.href;
    },

    async exchange(callbackUrl, checks) {
      const config = required();
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw new Error('no ID token');
      let email = typeof claims.email === 'string' ? claims.email : null;
      let emailVerified = claims.email_verified === true;
      let name = typeof claims.name === 'string' ? claims.name : null;
      // Some providers (Authelia by default) put the profile in userinfo only, not the ID token.
      if (email === null && config.serverMetadata().userinfo_endpoint) {
        const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
        email = typeof info.email === 'string' ? info.email : null;
        emailVerified = info.email_verified === true;
        name ??= typeof info.name === 'string' ? info.name : null;
      }
      name ??= typeof claims.preferred_username === 'string' ? claims.preferred_username : null;
      return { issuer: claims.iss, subject: claims.sub, email, emailVerified, name };
    },

    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}

/** Why a request to the provider failed, for the log: a code and message, never a token. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${typeof code === 'string' ? `${code} ` : ''}${err.message}${cause}`;
}
