import path from 'node:path';

/** Everything the server reads from its environment (D-OPS-1), validated once at start-up. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Origin (scheme://host[:port]) used for share URLs and the cross-origin guard; null = the request's. */
  publicUrl: string | null;
  /**
   * Host names (lower case, `name` or `name:port`) requests may be addressed to, besides
   * PUBLIC_URL's; empty with no PUBLIC_URL means loopback names and IP literals
   * (docs/decisions/0007-trusted-hosts.md).
   */
  allowedHosts: string[];
  /** Passed to Fastify's trustProxy: false, true, a hop count, or a list of addresses/CIDRs. */
  trustProxy: boolean | number | string[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Longest time a client may take to send a whole request, body included (slow uploads and
   * trickling bodies are cut off with 408 after it).
   */
  requestTimeoutSeconds: number;
  /** Days a trashed note is kept before it is deleted for good; 0 keeps it forever (D-NOTE-4). */
  trashRetentionDays: number;
}

export class ConfigError extends Error {}

interface Variable {
  name: string;
  description: string;
  fallback: string;
}

export const configVariables: Variable[] = [
  { name: 'PORT', description: 'TCP port to listen on (0 picks a free one)', fallback: '3000' },
  {
    name: 'HOST',
    description: 'Interface to bind; 0.0.0.0 to listen on every interface',
    fallback: '127.0.0.1',
  },
  {
    name: 'DATA_DIR',
    description: 'Directory for the SQLite database and attachment files',
    fallback: './data',
  },
  {
    name: 'PUBLIC_URL',
    description: 'External origin, e.g. https://notes.example.com; used in share links and origin checks',
    fallback: '(the request origin)',
  },
  {
    name: 'ALLOWED_HOSTS',
    description:
      "Comma-separated host[:port] names the server answers to besides PUBLIC_URL's; unset with no PUBLIC_URL: localhost and IP addresses",
    fallback: '(none)',
  },
  {
    name: 'TRUST_PROXY',
    description: 'Trust X-Forwarded-* headers: true, false, a hop count, or comma-separated IPs/CIDRs',
    fallback: 'false',
  },
  {
    name: 'LOG_LEVEL',
    description: 'fatal, error, warn, info, debug, trace or silent',
    fallback: 'info',
  },
  {
    name: 'REQUEST_TIMEOUT_SECONDS',
    description:
      'Seconds a client may take to send a whole request, body included (a 10 MiB upload needs 280 kbit/s at 300); then 408',
    fallback: '300',
  },
  {
    name: 'TRASH_RETENTION_DAYS',
    description: 'Days before trashed notes are deleted permanently; 0 keeps them forever',
    fallback: '30',
  },
];

export function configHelp(): string {
  const width = Math.max(...configVariables.map((v) => v.name.length)) + 2;
  const lines = configVariables.map(
    (v) => `  ${v.name.padEnd(width)}${v.description} (default: ${v.fallback})`,
  );
  return ['Usage: node dist/main.js [--help]', '', 'Environment variables:', ...lines].join('\n');
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function integer(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${raw}`);
  return value;
}

function parsePublicUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute URL like https://notes.example.com, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`PUBLIC_URL must use http or https, got "${raw}"`);
  }
  return url.origin;
}

/** A DNS name or IPv4 address, or a bracketed IPv6 address, with an optional port. */
const HOST_ENTRY =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

function parseAllowedHosts(raw: string): string[] {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    if (!HOST_ENTRY.test(entry)) {
      throw new ConfigError(
        `ALLOWED_HOSTS entry "${entry}" is not a host name like notes.example.com or notes.lan:8080`,
      );
    }
  }
  return entries;
}

function parseTrustProxy(raw: string): Config['trustProxy'] {
  const value = raw.trim().toLowerCase();
  if (value === '' || value === 'false' || value === '0') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return integer('TRUST_PROXY', value, 0, 100);
  const entries = value.split(',').map((s) => s.trim());
  for (const entry of entries) {
    if (
      !/^[0-9a-f.:]+(\/\d{1,3})?$/.test(entry) &&
      entry !== 'loopback' &&
      entry !== 'linklocal' &&
      entry !== 'uniquelocal'
    ) {
      throw new ConfigError(
        `TRUST_PROXY entry "${entry}" is not an IP address, CIDR range, true, false or a number`,
      );
    }
  }
  return entries;
}

/** Reads and validates the environment; throws ConfigError with a message fit for a person. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = (env.LOG_LEVEL ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }
  const host = env.HOST ?? '127.0.0.1';
  if (host.trim() === '') throw new ConfigError('HOST must not be empty');
  const dataDir = env.DATA_DIR ?? './data';
  if (dataDir.trim() === '') throw new ConfigError('DATA_DIR must not be empty');
  return {
    port: integer('PORT', env.PORT ?? '3000', 0, 65535),
    host,
    dataDir: path.resolve(dataDir),
    publicUrl: env.PUBLIC_URL ? parsePublicUrl(env.PUBLIC_URL) : null,
    allowedHosts: parseAllowedHosts(env.ALLOWED_HOSTS ?? ''),
    trustProxy: parseTrustProxy(env.TRUST_PROXY ?? 'false'),
    logLevel: logLevel as Config['logLevel'],
    requestTimeoutSeconds: integer('REQUEST_TIMEOUT_SECONDS', env.REQUEST_TIMEOUT_SECONDS ?? '300', 1, 86400),
    trashRetentionDays: integer('TRASH_RETENTION_DAYS', env.TRASH_RETENTION_DAYS ?? '30', 0, 36500),
  };
}
