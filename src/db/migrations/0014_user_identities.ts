import { type Kysely, sql } from 'kysely';
import { engine } from '../dialect.js';

/**
 * Single sign-on (docs/decisions/0036-single-sign-on.md): which provider account (issuer,
 * subject) signs in as which user, and the sign-ons under way (the PKCE verifier and nonce of
 * a redirect to the provider, one row each, used once, kept ten minutes). Times are BIGINT on
 * PostgreSQL like every other column of Unix milliseconds.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const time = engine() === 'postgres' ? sql.raw('BIGINT') : sql.raw('INTEGER');
  await sql`
    CREATE TABLE user_identities (
      issuer TEXT NOT NULL,
      subject TEXT NOT NULL,
      user_id ${time} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at ${time} NOT NULL,
      PRIMARY KEY (issuer, subject)
    )`.execute(db);
  await sql`CREATE INDEX user_identities_user ON user_identities (user_id)`.execute(db);
  await sql`
    CREATE TABLE oidc_logins (
      state_hash TEXT PRIMARY KEY,
      code_verifier TEXT NOT NULL,
      nonce TEXT NOT NULL,
      return_to TEXT NOT NULL,
      expires_at ${time} NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX oidc_logins_expiry ON oidc_logins (expires_at)`.execute(db);
}
