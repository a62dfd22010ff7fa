/**
 * Web Push (RFC 8030) to the browsers a user subscribed: payloads encrypted with `aes128gcm`
 * (RFC 8291) and signed with the server's VAPID key (RFC 8292), both by the `web-push` package;
 * the request itself goes out here, through endpoints.ts's checks (SSRF).
 */
import http from 'node:http';
import https from 'node:https';
import webPush from 'web-push';
import type { Db } from '../../db/types.js';
import type { Logger } from '../../logger.js';
import { endpointUrl, pushLookup, RefusedEndpoint } from './endpoints.js';
import type { ReminderPush } from './schemas.js';

const VAPID_KEY_NAME = 'vapid';
/** A push request that takes longer is given up (the ring is sent again later). */
const PUSH_TIMEOUT_MS = 10_000;
/** A push service keeps an undelivered reminder this long for a device that is offline. */
const PUSH_TTL_SECONDS = 24 * 60 * 60;

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/**
 * The server's VAPID key pair, generated on first use and kept in the database; when two
 * processes generate one at once, the first stored wins and both use it.
 */
export async function vapidKeys(db: Db): Promise<VapidKeys> {
  const read = () =>
    db.selectFrom('server_keys').select('value').where('name', '=', VAPID_KEY_NAME).executeTakeFirst();
  const stored = await read();
  if (stored) return JSON.parse(stored.value) as VapidKeys;
  const generated = webPush.generateVAPIDKeys();
  await db.transaction().execute((trx) =>
    trx
      .insertInto('server_keys')
      .values({ name: VAPID_KEY_NAME, value: JSON.stringify(generated) })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute(),
  );
  return JSON.parse((await read())!.value) as VapidKeys;
}

export interface PushTarget {
  endpoint: string;
  p256dh: string;
  auth: string;
}

/** What became of one push: delivered, gone (404/410: forget the subscription), or failed. */
export type PushOutcome = 'delivered' | 'gone' | 'failed';

export interface PushSenderDeps {
  db: Db;
  log: Logger;
  allowPrivateEndpoints: boolean;
  /** VAPID `sub`: a mailto: or https: contact for the push services. */
  subject: string;
}

export function createPushSender(deps: PushSenderDeps) {
  let keys: Promise<VapidKeys> | undefined;
  const keysOnce = () => {
    keys ??= vapidKeys(deps.db).catch((error) => {
      keys = undefined;
      throw error;
    });
    return keys;
  };

  function post(url: URL, details: webPush.RequestDetails): Promise<number> {
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = client.request(
        url,
        {
          method: details.method,
          headers: details.headers,
          timeout: PUSH_TIMEOUT_MS,
          // The checked resolution (endpoints.ts); PUSH_ALLOW_PRIVATE_ENDPOINTS uses the system's.
          ...(deps.allowPrivateEndpoints ? {} : { lookup: pushLookup }),
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error('push request timed out')));
      request.on('error', reject);
      request.end(details.body ?? undefined);
    });
  }

  return {
    async publicKey(): Promise<string> {
      return (await keysOnce()).publicKey;
    },

    /** Encrypts `payload` for the subscription and posts it to its push service. */
    async send(target: PushTarget, payload: ReminderPush): Promise<PushOutcome> {
      try {
        const url = endpointUrl(target.endpoint, deps.allowPrivateEndpoints);
        const { publicKey, privateKey } = await keysOnce();
        const details = webPush.generateRequestDetails(
          { endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } },
          JSON.stringify(payload),
          {
            vapidDetails: { subject: deps.subject, publicKey, privateKey },
            contentEncoding: 'aes128gcm',
            TTL: PUSH_TTL_SECONDS,
            urgency: 'high',
          },
        );
        const status = await post(url, details);
        if (status === 404 || status === 410) return 'gone';
        if (status >= 200 && status < 300) return 'delivered';
        deps.log.warn({ status, host: url.host }, 'push service refused a push');
        return 'failed';
      } catch (error) {
        // The endpoint's host only: its path names the device.
        const host = URL.canParse(target.endpoint) ? new URL(target.endpoint).host : 'invalid';
        const refused = error instanceof RefusedEndpoint;
        deps.log.warn(
          { host, reason: (error as Error).message },
          refused ? 'push endpoint refused' : 'push failed',
        );
        return refused ? 'gone' : 'failed';
      }
    },
  };
}

export type PushSender = ReturnType<typeof createPushSender>;
