import type { ScenarioContext } from './scenarios.js';
import { BENCH_PASSWORD } from './seed.js';

/** Signs in as the seeded owner; the session cookie (`session=…`). */
export async function login(url: string): Promise<string> {
  const response = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: BENCH_PASSWORD }),
  });
  const cookie = response.headers.getSetCookie().find((c) => c.startsWith('session='));
  if (!response.ok || !cookie) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  return cookie.split(';')[0]!;
}

/** JSON requests as the signed-in owner, for the scenarios' preparation. */
export function apiClient(url: string, cookie: string): ScenarioContext['api'] {
  return async <T>(method: string, requestPath: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}${requestPath}`, {
      method,
      headers: body === undefined ? { cookie } : { cookie, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok)
      throw new Error(`${method} ${requestPath}: ${response.status} ${await response.text()}`);
    return (response.headers.get('content-type')?.includes('json') ? response.json() : response.text()) as T;
  };
}
