import http from 'node:http';
import type { FastifyInstance } from 'fastify';

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

/** A test server as clients see it: its address, and the app itself when requests may be injected. */
export interface ClientTarget {
  url: string;
  app?: Pick<FastifyInstance, 'inject'>;
}

/**
 * A small HTTP client that keeps cookies like a browser would (one jar per client). Given the app,
 * it injects requests whose body is empty, text or bytes (`app.inject`: the same routing, hooks and
 * serialisation without a socket, ~1 ms of CPU less a request); anything else, such as a multipart
 * upload, goes over the socket with fetch, as does every request of a client made from a URL alone.
 * Tests of what only a socket shows (streaming, slow clients, connection handling, the MCP SDK)
 * build their client from the URL.
 */
export class TestClient {
  readonly cookies = new Map<string, string>();

  constructor(
    readonly baseUrl: string,
    readonly app?: ClientTarget['app'],
  ) {}

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
    const url = new URL(path, this.baseUrl);
    const response =
      this.app && (body === undefined || typeof body === 'string' || body instanceof Uint8Array)
        ? await injected<T>(this.app, method, url, headers, body)
        : await fetched<T>(method, url, headers, body);
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index);
      const value = pair!.slice(index + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  get = <T = any>(path: string, options?: RequestOptions) => this.request<T>('GET', path, options);
  post = <T = any>(path: string, json?: unknown, options?: RequestOptions) =>
    this.request<T>('POST', path, { json, ...options });
  patch = <T = any>(path: string, json?: unknown, options?: RequestOptions) =>
    this.request<T>('PATCH', path, { json, ...options });
  delete = <T = any>(path: string, options?: RequestOptions) => this.request<T>('DELETE', path, options);
}

/** A response as the tests read it: the body parsed when the server says it is JSON. */
function testResponse<T>(status: number, headers: Headers, text: string): TestResponse<T> {
  const isJson = headers.get('content-type')?.includes('application/json') && text !== '';
  return { status, headers, body: (isJson ? JSON.parse(text) : text) as T, text };
}

/** Node's header object (repeated headers as arrays) as a fetch `Headers`. */
function headersOf(nodeHeaders: http.IncomingHttpHeaders | http.OutgoingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(nodeHeaders)) {
    for (const item of [value ?? []].flat()) headers.append(name, String(item));
  }
  return headers;
}

async function fetched<T>(
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: RequestInit['body'],
): Promise<TestResponse<T>> {
  const response = await fetch(url, { method, headers, body, redirect: 'manual' });
  return testResponse(response.status, response.headers, await response.text());
}

/**
 * The request fetch would send, injected: the URL as fetch normalises it, fetch's Host and Accept
 * unless given, and the injected request's peer is 127.0.0.1 like the socket's.
 */
async function injected<T>(
  app: NonNullable<ClientTarget['app']>,
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
): Promise<TestResponse<T>> {
  const response = await app.inject({
    method: method as 'GET',
    url: url.pathname + url.search,
    headers: { host: url.host, accept: '*/*', ...headers },
    payload: body === undefined ? undefined : typeof body === 'string' ? body : Buffer.from(body),
  });
  return testResponse(response.statusCode, headersOf(response.headers), response.payload);
}

export const OWNER_PASSWORD = 'correct horse battery';

/** A client of `target`: injecting into its app when given one, over the socket for a bare URL. */
export function clientOf(target: string | ClientTarget): TestClient {
  return typeof target === 'string' ? new TestClient(target) : new TestClient(target.url, target.app);
}

/** What first-time setup takes besides the password. */
export interface SetupProfile {
  email?: string;
  displayName?: string;
}

/** Runs first-time setup and returns a client signed in as the owner. */
export async function setupOwner(target: string | ClientTarget, extra: SetupProfile = {}) {
  const client = clientOf(target);
  const response = await client.post('/api/auth/setup', { password: OWNER_PASSWORD, ...extra });
  if (response.status !== 201) throw new Error(`setup failed: ${response.status} ${response.text}`);
  return client;
}

const ownerClients = new WeakMap<object, Promise<TestClient>>();

/** A client signed in as the owner of this server: set up on first use, then reused. */
export function ownerClientFor(server: Required<ClientTarget>): Promise<TestClient> {
  let owner = ownerClients.get(server.app);
  if (!owner) {
    owner = (async () => {
      const client = clientOf(server);
      const status = await client.get('/api/auth/status');
      if (status.body.setupRequired) return setupOwner(server);
      const response = await client.post('/api/auth/login', { password: OWNER_PASSWORD });
      if (response.status !== 200) throw new Error(`owner login failed: ${response.status} ${response.text}`);
      return client;
    })();
    ownerClients.set(server.app, owner);
  }
  return owner;
}

/** A client of `target` signed in as the user `email`. */
export async function signIn(
  target: string | ClientTarget,
  email: string,
  password: string,
): Promise<TestClient> {
  const client = clientOf(target);
  const response = await client.post('/api/auth/login', { email, password });
  if (response.status !== 200) throw new Error(`login failed: ${response.status} ${response.text}`);
  return client;
}

/**
 * Creates a non-owner user through POST /api/users (as `owner`, or as the server's owner signed
 * in with OWNER_PASSWORD, running setup first if needed) and returns a client signed in as them.
 */
export async function createUserClient(
  server: Required<ClientTarget>,
  email: string,
  password = 'another secret',
  owner?: TestClient,
): Promise<{ client: TestClient; userId: number }> {
  const userId = await addUser(owner ?? (await ownerClientFor(server)), email, password);
  const client = clientOf(server);
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
        resolve(testResponse(response.statusCode!, headersOf(response.headers), text));
      });
    });
    request.end(body);
  });
}

/** A new note's id as the server and the web app make it: a UUID version 7 (decision 0047). */
export const NEW_NOTE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
