/** A small HTTP client over fetch that keeps cookies like a browser would (one jar per client). */
export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  json?: unknown;
  body?: RequestInit['body'];
  headers?: Record<string, string>;
}

export class TestClient {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  async request<T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookies.size > 0 && !('cookie' in headers)) {
      headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    }
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(new URL(path, this.baseUrl), { method, headers, body, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index);
      const value = pair!.slice(index + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    let parsed: unknown = text;
    if (response.headers.get('content-type')?.includes('application/json') && text !== '')
      parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get = <T = any>(path: string, options?: RequestOptions) => this.request<T>('GET', path, options);
  post = <T = any>(path: string, json?: unknown, options?: RequestOptions) =>
    this.request<T>('POST', path, { json, ...options });
  patch = <T = any>(path: string, json?: unknown, options?: RequestOptions) =>
    this.request<T>('PATCH', path, { json, ...options });
  delete = <T = any>(path: string, options?: RequestOptions) => this.request<T>('DELETE', path, options);
}

export const OWNER_PASSWORD = 'correct horse battery';

/** Runs first-time setup and returns a client signed in as the owner. */
export async function setupOwner(baseUrl: string, extra: { email?: string; displayName?: string } = {}) {
  const client = new TestClient(baseUrl);
  const response = await client.post('/api/auth/setup', { password: OWNER_PASSWORD, ...extra });
  if (response.status !== 201) throw new Error(`setup failed: ${response.status} ${response.text}`);
  return client;
}

/**
 * Signs in as a second, non-owner user created straight through the store (the user
 * administration endpoints belong to the collaboration issue).
 */
export async function createUserClient(
  server: { app: import('fastify').FastifyInstance; url: string },
  email: string,
  password = 'another secret',
): Promise<{ client: TestClient; userId: number }> {
  const { hashPassword } = await import('../../src/features/auth/passwords.js');
  const { insertUser } = await import('../../src/features/users/store.js');
  const user = await insertUser(server.app.db, {
    email,
    display_name: email.split('@')[0]!,
    password_hash: await hashPassword(password),
    is_owner: 0,
    created_at: Date.now(),
  });
  const client = new TestClient(server.url);
  const response = await client.post('/api/auth/login', { email, password });
  if (response.status !== 200) throw new Error(`login failed: ${response.status} ${response.text}`);
  return { client, userId: user.id };
}
