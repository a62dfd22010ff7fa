import http from 'node:http';

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

const ownerClients = new WeakMap<object, Promise<TestClient>>();

/** A client signed in as the owner of this server: set up on first use, then reused. */
export function ownerClientFor(server: { app: object; url: string }): Promise<TestClient> {
  let owner = ownerClients.get(server.app);
  if (!owner) {
    owner = (async () => {
      const client = new TestClient(server.url);
      const status = await client.get('/api/auth/status');
      if (status.body.setupRequired) return setupOwner(server.url);
      const response = await client.post('/api/auth/login', { password: OWNER_PASSWORD });
      if (response.status !== 200) throw new Error(`owner login failed: ${response.status} ${response.text}`);
      return client;
    })();
    ownerClients.set(server.app, owner);
  }
  return owner;
}

/**
 * Creates a non-owner user through POST /api/users (as `owner`, or as the server's owner signed
 * in with OWNER_PASSWORD, running setup first if needed) and returns a client signed in as them.
 */
export async function createUserClient(
  server: { app: object; url: string },
  email: string,
  password = 'another secret',
  owner?: TestClient,
): Promise<{ client: TestClient; userId: number }> {
  const userId = await addUser(owner ?? (await ownerClientFor(server)), email, password);
  const client = new TestClient(server.url);
  const response = await client.post('/api/auth/login', { email, password });
  if (response.status !== 200) throw new Error(`login failed: ${response.status} ${response.text}`);
  return { client, userId };
}

/** Creates a user through POST /api/users as `owner` without signing them in; returns the id. */
export async function addUser(
  owner: TestClient,
  email: string,
  password = 'another secret',
  displayName = email.split('@')[0]!,
): Promise<number> {
  const created = await owner.post('/api/users', { email, displayName, password });
  if (created.status !== 201) throw new Error(`user creation failed: ${created.status} ${created.text}`);
  return created.body.id;
}

/** Creates an API key as the signed-in `client` (all scopes unless given); returns its id and key. */
export async function createApiKey(
  client: TestClient,
  scopes?: string[],
): Promise<{ id: string; key: string }> {
  const response = await client.post('/api/settings/api-keys', { name: 'agent', scopes });
  if (response.status !== 201) throw new Error(`key creation failed: ${response.status} ${response.text}`);
  return response.body;
}

/**
 * One request through node:http, which sends the path and headers exactly as given: a forged
 * Host, or a path fetch would normalise (`//s/…`, percent-encoding). No cookie jar.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; json?: unknown } = {},
): Promise<TestResponse> {
  const { hostname, port } = new URL(baseUrl);
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  const headers = {
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const request = http.request({ hostname, port, method, path, headers });
    request.on('error', reject);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const isJson = response.headers['content-type']?.includes('application/json') && text !== '';
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          for (const item of [value ?? []].flat()) responseHeaders.append(name, item);
        }
        resolve({
          status: response.statusCode!,
          headers: responseHeaders,
          body: isJson ? JSON.parse(text) : text,
          text,
        });
      });
    });
    request.end(body);
  });
}
