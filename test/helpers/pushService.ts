/**
 * A push service as a browser vendor runs one (RFC 8030), on 127.0.0.1: it accepts a push only
 * with a valid VAPID JWT (RFC 8292: ES256 signed by the key in `k`, `aud` its own origin, not
 * expired), decrypts the `aes128gcm` body (RFC 8291) with the subscription's private key and
 * auth secret, as the browser would, and keeps what it received. An endpoint can be told to
 * answer 404 or 410 (the subscription is gone).
 */
import { createECDH, type ECDH, randomBytes, verify } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import ece from 'http_ece';

export interface BrowserSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface ReceivedPush {
  /** The subscription's path id. */
  device: string;
  /** The VAPID public key the push was signed with. */
  vapidKey: string;
  payload: Record<string, unknown>;
  at: number;
}

export interface PushService {
  url: string;
  received: ReceivedPush[];
  /** Requests refused (bad signature, undecryptable, ...), with why. */
  refused: string[];
  /** A new browser's subscription to this service. */
  subscribe(): BrowserSubscription;
  /** Makes this endpoint answer `status` from now on. */
  answer(endpoint: string, status: number): void;
  /**
   * While on, pushes are received (and kept) but not answered: the sender waits, as on a slow
   * push service. Turning it off answers the held ones.
   */
  holdAnswers(on: boolean): void;
  /** Resolves once `count` pushes arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedPush[]>;
  close(): Promise<void>;
}

const b64u = (buffer: Buffer) => buffer.toString('base64url');

/** Checks the VAPID Authorization header; returns its public key or throws why not. */
function checkVapid(header: string | undefined, origin: string): string {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!match) throw new Error(`no vapid authorization: ${header}`);
  const [, jwt, k] = match as unknown as [string, string, string];
  const [head, body, signature] = jwt.split('.') as [string, string, string];
  const key = Buffer.from(k, 'base64url');
  const jwk = { kty: 'EC', crv: 'P-256', x: b64u(key.subarray(1, 33)), y: b64u(key.subarray(33, 65)) };
  const valid = verify(
    'sha256',
    Buffer.from(`${head}.${body}`),
    { key: jwk, format: 'jwk', dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  );
  if (!valid) throw new Error('bad VAPID signature');
  const header64 = JSON.parse(Buffer.from(head, 'base64url').toString());
  if (header64.alg !== 'ES256') throw new Error(`alg ${header64.alg}`);
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
  if (claims.aud !== origin) throw new Error(`aud ${claims.aud} is not ${origin}`);
  if (!(claims.exp * 1000 > Date.now() && claims.exp * 1000 <= Date.now() + 24 * 3600_000))
    throw new Error(`exp ${claims.exp} out of range`);
  if (!/^(mailto:|https:)/.test(claims.sub)) throw new Error(`sub ${claims.sub}`);
  return k;
}

export async function startPushService(): Promise<PushService> {
  const devices = new Map<string, { ecdh: ECDH; auth: string; status: number }>();
  const received: ReceivedPush[] = [];
  const refused: string[] = [];
  const waiters: (() => void)[] = [];
  const held: http.ServerResponse[] = [];
  let holding = false;
  let origin = '';

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const device = devices.get(request.url?.replace(/^\/push\//, '') ?? '');
      if (!device) return response.writeHead(404).end();
      if (device.status !== 201) return response.writeHead(device.status).end();
      try {
        if (request.method !== 'POST') throw new Error(`method ${request.method}`);
        if (request.headers['content-encoding'] !== 'aes128gcm')
          throw new Error(`encoding ${request.headers['content-encoding']}`);
        if (!request.headers.ttl) throw new Error('no TTL');
        const vapidKey = checkVapid(request.headers.authorization, origin);
        const plain = ece.decrypt(Buffer.concat(chunks), {
          version: 'aes128gcm',
          privateKey: device.ecdh,
          authSecret: device.auth,
        });
        received.push({
          device: request.url!,
          vapidKey,
          payload: JSON.parse(plain.toString('utf8')),
          at: Date.now(),
        });
        for (const wake of waiters.splice(0)) wake();
        if (holding) held.push(response);
        else response.writeHead(201).end();
      } catch (error) {
        refused.push((error as Error).message);
        response.writeHead(400).end();
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: origin,
    received,
    refused,
    subscribe() {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const id = randomBytes(8).toString('hex');
      const auth = b64u(randomBytes(16));
      devices.set(id, { ecdh, auth, status: 201 });
      return { endpoint: `${origin}/push/${id}`, keys: { p256dh: b64u(ecdh.getPublicKey()), auth } };
    },
    answer(endpoint, status) {
      devices.get(endpoint.replace(/^.*\/push\//, ''))!.status = status;
    },
    holdAnswers(on) {
      holding = on;
      if (!on) for (const response of held.splice(0)) response.writeHead(201).end();
    },
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(`${received.length} of ${count} pushes after ${timeoutMs} ms; refused: ${refused}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
