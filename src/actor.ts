import { errors } from './errors.js';

export type Scope = 'notes:read' | 'notes:write';
export const ALL_SCOPES: readonly Scope[] = ['notes:read', 'notes:write'];

/** Who is calling, as every service sees it: from a session cookie or an API key. */
export interface Actor {
  userId: number;
  isOwner: boolean;
  via: 'session' | 'key';
  scopes: ReadonlySet<Scope>;
  /** Set when the actor came from an API key. */
  keyId?: string;
}

/** A read-only API key may look but not change anything (D-KEY-3). */
export function requireWriteScope(actor: Actor): void {
  if (!actor.scopes.has('notes:write')) throw errors.insufficientScope();
}

export function sessionActor(user: { id: number; is_owner: number }): Actor {
  return { userId: user.id, isOwner: user.is_owner === 1, via: 'session', scopes: new Set(ALL_SCOPES) };
}
