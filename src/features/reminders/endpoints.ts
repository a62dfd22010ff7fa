/**
 * Which push endpoints the server sends to. An endpoint is a URL a client chose, so without
 * these checks a user could make the server send requests into its own network (SSRF): only
 * `https:` URLs whose host is, and resolves to, public unicast addresses are used, unless
 * PUSH_ALLOW_PRIVATE_ENDPOINTS lifts it (tests, push servers on a LAN). The addresses are checked
 * when the subscription is stored and again when each push is sent, on the address the
 * connection uses (pushLookup), so a name that resolves elsewhere later is caught too.
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** Public unicast only: loopback, private, link-local, CGNAT, NAT64, reserved... are refused. */
export function isPublicAddress(address: string): boolean {
  try {
    return ipaddr.process(address).range() === 'unicast';
  } catch {
    return false;
  }
}

export class RefusedEndpoint extends Error {}

/** The endpoint as a URL, if its form may be used (scheme, no credentials); else RefusedEndpoint. */
export function endpointUrl(endpoint: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new RefusedEndpoint('the endpoint is not a URL');
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw new RefusedEndpoint('the endpoint must be an https: URL');
  if (url.username !== '' || url.password !== '')
    throw new RefusedEndpoint('the endpoint must not hold credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && net.isIP(host) !== 0 && !isPublicAddress(host)) {
    throw new RefusedEndpoint('the endpoint must be on a public address');
  }
  return url;
}

/** Every address the endpoint's host resolves to is public (or allowPrivate); else RefusedEndpoint. */
export async function checkEndpoint(endpoint: string, allowPrivate: boolean): Promise<URL> {
  const url = endpointUrl(endpoint, allowPrivate);
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) !== 0) return url;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true });
  } catch {
    throw new RefusedEndpoint('the endpoint host does not resolve');
  }
  if (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a.address))) {
    throw new RefusedEndpoint('the endpoint must be on a public address');
  }
  return url;
}

/**
 * dns.lookup for the push requests' sockets: the addresses a connection is about to use, refused
 * unless all are public, so a DNS answer that changed since the subscription was checked
 * (rebinding) reaches nothing.
 */
export const pushLookup: net.LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const list = addresses as dns.LookupAddress[];
    if (list.length === 0 || !list.every((a) => isPublicAddress(a.address))) {
      return callback(new RefusedEndpoint(`${hostname} resolves to a non-public address`), '', 0);
    }
    if (options.all) return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};
