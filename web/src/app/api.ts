/** The API's auth routes (docs/api.md "Authentication"), same origin, cookie session. */
import type { ApiKey, CreatedApiKey } from '../../../src/shared/api/apiKeys.js';
import type { AuthStatus, Collaborator, UserProfile, UserSummary } from '../../../src/shared/api/people.js';

/** Where the single sign-on button leads: the provider, then back to `returnTo` signed in. */
export const singleSignOnUrl = (returnTo: string) =>
  `/api/auth/oidc/login?returnTo=${encodeURIComponent(returnTo)}`;

/** An answer of the API other than 2xx, with its D-ERR-1 message for the person. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** One JSON call; any answer but 2xx throws an ApiError with the server's message. */
async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // 204 and other empty answers have no JSON.
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(response.status, answer.message ?? response.statusText);
  return answer as T;
}

export const fetchAuthStatus = () => call<AuthStatus>('GET', '/api/auth/status');
export const setupOwner = (password: string, email: string) =>
  call('POST', '/api/auth/setup', email ? { password, email } : { password });
/** Without an email, the owner signs in. */
export const signIn = (password: string, email: string) =>
  call('POST', '/api/auth/login', email ? { password, email } : { password });
export const signOut = () => call('POST', '/api/auth/logout');
export const changePassword = (currentPassword: string, newPassword: string) =>
  call('POST', '/api/auth/password', { currentPassword, newPassword });

// ---- People (docs/collaboration.md) ----

const collaboratorsPath = (noteId: string) => `/api/notes/${encodeURIComponent(noteId)}/collaborators`;
export const fetchCollaborators = (noteId: string) => call<Collaborator[]>('GET', collaboratorsPath(noteId));
/** Answers the full list after the addition (D-COLLAB-2). */
export const addCollaborator = (noteId: string, userId: number) =>
  call<Collaborator[]>('POST', collaboratorsPath(noteId), { userId });
export const removeCollaborator = (noteId: string, userId: number | 'self') =>
  call('DELETE', `${collaboratorsPath(noteId)}?userId=${userId}`);
export const searchUsers = (q: string) =>
  call<UserSummary[]>('GET', `/api/users/search?q=${encodeURIComponent(q)}`);

interface ShareLink {
  token: string;
  url: string;
}
const sharePath = (noteId: string) => `/api/notes/${encodeURIComponent(noteId)}/share`;
/** Idempotent: the note's existing link, or a new one (docs/sharing.md). */
export const createShareLink = (noteId: string) => call<ShareLink>('POST', sharePath(noteId));
export const revokeShareLink = (noteId: string) => call('DELETE', sharePath(noteId));

// ---- The owner's user administration ----

export const fetchUsers = () => call<UserProfile[]>('GET', '/api/users');
export const createUser = (input: { email: string; displayName: string; password: string }) =>
  call<UserSummary>('POST', '/api/users', input);
export const deleteUser = (id: number) => call('DELETE', `/api/users/${id}`);

// ---- API keys (docs/api-keys.md) ----

export const fetchApiKeys = () => call<ApiKey[]>('GET', '/api/settings/api-keys');
/** The answer's `key` is the only time the secret is shown. */
export const createApiKey = (name: string, readOnly: boolean) =>
  call<CreatedApiKey>('POST', '/api/settings/api-keys', {
    name,
    ...(readOnly ? { scopes: ['notes:read'] } : {}),
  });
export const revokeApiKey = (id: string) =>
  call('DELETE', `/api/settings/api-keys/${encodeURIComponent(id)}`);
