import { errors } from './errors.js';
import { ALL_SCOPES, type Scope } from './shared/api/apiKeys.js';

/** Who is calling, as every service sees it: from a session cookie or an API key. */
export interface Actor {
  userId: number;
  isOwner: boolean;
  via: 'session' | 'key';
  scopes: ReadonlySet<Scope>;
  /** Set when the actor came from an API key. */
  keyId?: string;
}

/** A session just started or renewed: the cookie to send (the http layer sets it). */
export interface NewSession {
  token: string;
  maxAgeSeconds: number;
}

/** A session cookie resolved to its actor (sessions are kept by the auth feature). */
export interface ResolvedSession {
  actor: Actor;
  tokenHash: string;
  /** Set when the session was renewed and the cookie must be sent again. */
  renewed?: NewSession;
}

/** A read-only API key may look but not change anything (D-KEY-3). */
export function canWrite(actor: Actor): boolean {
  return actor.scopes.has('notes:write');
}

export function requireWriteScope(actor: Actor): void {
  if (!canWrite(actor)) throw errors.insufficientScope();
}

/** User administration is for the owner of the instance only (D-AUTH-2). */
export function requireInstanceOwner(actor: Actor): void {
  if (!actor.isOwner) throw errors.forbidden('Only the owner of this instance may manage users');
}

export function sessionActor(user: { id: number; is_owner: number }): Actor {
  return { userId: user.id, isOwner: user.is_owner === 1, via: 'session', scopes: new Set(ALL_SCOPES) };
}
