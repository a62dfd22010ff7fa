import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { errorBody } from './errorHandler.js';

/** A host as `name` (lower case, IPv6 in brackets, no trailing dot) and `port` ('' when absent). */
interface HostName {
  name: string;
  port: string;
}

function splitHost(host: string): HostName {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(host.trim().toLowerCase());
  return match ? { name: match[1]!.replace(/\.$/, ''), port: match[2] ?? '' } : { name: '', port: '' };
}

/** Names no DNS answer can point elsewhere: loopback names and IP literals. */
function isLocalOrLiteral(name: string): boolean {
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (name.startsWith('[') && name.endsWith(']')) return isIP(name.slice(1, -1)) === 6;
  return isIP(name) === 4;
}

/**
 * Which Host values this server answers to (docs/decisions/0007-trusted-hosts.md): PUBLIC_URL's
 * host name on any port, and each ALLOWED_HOSTS entry (on its port when it names one); with
 * neither configured, loopback names and IP literals, which DNS rebinding cannot produce.
 */
function trustedHostMatcher(config: Pick<Config, 'publicUrl' | 'allowedHosts'>): (host: string) => boolean {
  const allowed = config.allowedHosts.map(splitHost);
  if (config.publicUrl) allowed.push({ name: new URL(config.publicUrl).hostname, port: '' });
  if (allowed.length === 0) return (host) => isLocalOrLiteral(splitHost(host).name);
  return (host) => {
    const { name, port } = splitHost(host);
    return allowed.some((entry) => entry.name === name && (entry.port === '' || entry.port === port));
  };
}

/** 127.0.0.0/8, ::1 and ::1's IPv4-mapped form: a peer on this machine (or in this container). */
function isLoopbackAddress(address: string | undefined): boolean {
  return address !== undefined && (address === '::1' || /^(?:::ffff:)?127\./.test(address));
}

/**
 * A health check from this machine or container (a HEALTHCHECK, a readiness probe, curl on the
 * host): GET /api/health over a loopback connection addressed to a loopback name. No DNS
 * rebinding page can send that Host (decision 0035, amending 0007), and the answer tells nothing.
 */
function isLocalHealthProbe(request: FastifyRequest): boolean {
  const { name } = splitHost(request.host);
  const loopbackName = name === 'localhost' || name === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(name);
  return (
    loopbackName &&
    request.routeOptions.url === '/api/health' &&
    isLoopbackAddress(request.socket.remoteAddress)
  );
}

const MAX_HOST_IN_MESSAGE = 100;

/**
 * Refuses a request addressed to a host name this server does not know, before any route runs:
 * a page on attacker.example whose name was re-pointed at this server (DNS rebinding) is
 * same-origin with itself, so the Origin check alone cannot stop it. The host is the Host
 * header, or X-Forwarded-Host from a proxy trusted by TRUST_PROXY.
 */
export function registerTrustedHosts(app: FastifyInstance, config: Config): void {
  const isTrusted = trustedHostMatcher(config);
  // A callback hook: every request passes it, and an async one costs a promise each time.
  app.addHook('onRequest', (request, reply, done) => {
    if (isTrusted(request.host) || isLocalHealthProbe(request)) return done();
    const host = request.host.slice(0, MAX_HOST_IN_MESSAGE);
    const message = `This server does not answer to the host "${host}"; its administrator can add it to ALLOWED_HOSTS`;
    // Sent here rather than thrown: a route's own error handler (the share page's HTML) must
    // not get to answer a request that was never meant for this server.
    reply.code(421).send(errorBody(421, 'misdirected_request', message));
  });
}
