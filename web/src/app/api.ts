/** The API's auth routes (docs/api.md "Authentication"), same origin, cookie session. */

export interface User {
  id: number;
  email: string;
  displayName: string;
  isOwner: boolean;
}

export interface AuthStatus {
  setupRequired: boolean;
  authenticated: boolean;
  user: User | null;
}

/** An answer of the API other than 2xx, with its D-ERR-1 message for the person. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
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
