import { hash, randomBytes } from 'node:crypto';

/**
 * A secret for a bearer credential (session cookie, API key, share link): 32 random bytes in
 * base64url (D-AUTH-4, D-KEY-1, D-SHARE-1).
 */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** How credentials are stored and looked up: the SHA-256 of the secret, never the secret. */
export function sha256Hex(secret: string): string {
  return hash('sha256', secret, 'hex');
}
