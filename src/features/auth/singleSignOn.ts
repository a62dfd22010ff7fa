import { randomBytes } from 'node:crypto';
import type { NewSession } from '../../actor.js';
import type { Clock } from '../../clock.js';
import { sha256Hex } from '../../crypto.js';
import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import * as users from '../../model/users.js';
import { describeError, type IdentityProvider, type VerifiedIdentity } from './identityProvider.js';
import { startSession } from './service.js';
import * as store from './store.js';

/** How long a person may take at the provider between the redirect and the callback. */
export const SIGN_ON_MAX_AGE_MS = 10 * 60_000;
const MAX_RETURN_PATH_LENGTH = 2000;

/**
 * Where a person goes after signing in: a path of this site only. Anything that a browser could
 * read as another origin (`//host`, `/\host`, `https:…`, control characters) becomes `/`.
 */
export function safeReturnPath(raw: string | undefined): string {
  if (!raw || raw.length > MAX_RETURN_PATH_LENGTH || !raw.startsWith('/')) return '/';
  // Browsers read a backslash as a slash, and drop tabs and newlines from URLs.
  if (raw.includes('\\') || hasControlCharacter(raw) || raw.startsWith('//')) return '/';
  const base = 'http://return.invalid';
  const url = new URL(raw, base);
  // Dot segments can leave a path that starts with `//` once resolved (`/..//host`).
  const resolved = `${url.pathname}${url.search}${url.hash}`;
  return url.origin === base && !resolved.startsWith('//') ? resolved : '/';
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** 32 random bytes, base64url: the state, nonce and PKCE verifier (RFC 7636 wants 43+ characters). */
const randomValue = () => randomBytes(32).toString('base64url');

/**
 * Single sign-on with an OpenID provider (issue 33, docs/decisions/0036-single-sign-on.md): the
 * redirect's state, nonce and PKCE verifier wait in `oidc_logins` (one row, used once, ten
 * minutes); the callback signs in the user linked to the provider account, links one by a
 * verified email the first time, or creates one when allowed. The provider's tokens are not kept.
 */
export function createSingleSignOnService({
  db,
  clock,
  provider,
  displayName,
  autoCreateUsers,
  log,
}: {
  db: Db;
  clock: Clock;
  provider: IdentityProvider;
  displayName: string;
  autoCreateUsers: boolean;
  log: { warn(details: object, message: string): void };
}) {
  function assertReady(): void {
    if (!provider.ready()) throw errors.ssoUnavailable();
  }

  /** The user this provider account signs in as, linking or creating one the first time. */
  async function userFor(identity: VerifiedIdentity): Promise<number> {
    const linked = await store.findLinkedUserId(db, identity.issuer, identity.subject);
    if (linked !== undefined) return linked;
    const byEmail = identity.email ? await users.findUserByEmail(db, identity.email) : undefined;
    // An unverified email proves nothing: whoever typed it at the provider would get the account.
    if (byEmail && !identity.emailVerified) throw errors.ssoEmailUnverified();
    if (!byEmail && !autoCreateUsers) throw errors.ssoNoAccount();
    return db.transaction().execute(async (trx) => {
      const now = clock.now();
      const userId =
        byEmail?.id ??
        (
          await users.insertUser(trx, {
            // Only a verified email is taken over: another account could not claim it later.
            email: identity.emailVerified && identity.email ? identity.email : '',
            display_name: (identity.name ?? identity.email ?? 'User').trim().slice(0, 100) || 'User',
            // No password: single sign-on only, until the owner or reset-password sets one.
            password_hash: '',
            is_owner: 0,
            created_at: now,
          })
        ).id;
      await store.linkIdentity(trx, {
        issuer: identity.issuer,
        subject: identity.subject,
        user_id: userId,
        created_at: now,
      });
      return userId;
    });
  }

  return {
    status: () => ({ displayName, available: provider.ready() }),

    /** Starts a sign-on: where to send the browser, and the state its cookie keeps. */
    async begin(redirectUri: string, returnTo: string | undefined) {
      assertReady();
      const checks = { state: randomValue(), nonce: randomValue(), codeVerifier: randomValue() };
      const url = await provider.authorizationUrl(redirectUri, checks);
      await store.insertPendingSignOn(db, {
        state_hash: sha256Hex(checks.state),
        code_verifier: checks.codeVerifier,
        nonce: checks.nonce,
        return_to: safeReturnPath(returnTo),
        expires_at: clock.now() + SIGN_ON_MAX_AGE_MS,
      });
      return { url, state: checks.state, maxAgeSeconds: SIGN_ON_MAX_AGE_MS / 1000 };
    },

    /**
     * Finishes a sign-on from the provider's redirect: `cookieState` is the state this browser
     * was given by begin(); the URL's state must be the same (no sign-in planted by another site).
     */
    async complete(
      callbackUrl: URL,
      cookieState: string | undefined,
    ): Promise<{ session: NewSession; returnTo: string }> {
      assertReady();
      const state = callbackUrl.searchParams.get('state');
      if (!state || !cookieState || state !== cookieState) {
        throw errors.ssoFailed('this sign-in was not started in this browser, or it took too long');
      }
      const pending = await store.takePendingSignOn(db, sha256Hex(state), clock.now());
      if (!pending) throw errors.ssoFailed('this sign-in link was used already or has expired');
      const providerError = callbackUrl.searchParams.get('error');
      if (providerError)
        throw errors.ssoFailed(`the identity provider answered "${providerError.slice(0, 100)}"`);
      let identity: VerifiedIdentity;
      try {
        identity = await provider.exchange(callbackUrl, {
          state,
          nonce: pending.nonce,
          codeVerifier: pending.code_verifier,
        });
      } catch (err) {
        log.warn({ reason: describeError(err) }, 'single sign-on: the code exchange or ID token failed');
        throw errors.ssoFailed('the identity provider did not confirm it');
      }
      const userId = await userFor(identity);
      return { session: await startSession(db, clock, userId), returnTo: pending.return_to };
    },
  };
}

export type SingleSignOnService = ReturnType<typeof createSingleSignOnService>;
