import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './shared/api/limits.js';

/** Everything the server reads from its environment (D-OPS-1), validated once at start-up. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** PostgreSQL connection URL; null: SQLite in DATA_DIR (docs/decisions/0015-postgresql.md). */
  databaseUrl: string | null;
  /**
   * A directory for attachment bytes that every server process can reach; null: DATA_DIR on
   * SQLite, the database itself on PostgreSQL (docs/decisions/0021-attachment-storage.md).
   */
  attachmentsDir: string | null;
  /** Seconds the server's start keeps retrying an unreachable PostgreSQL before it gives up. */
  databaseWaitSeconds: number;
  /**
   * Redis connection URL for the rate limits' counters and, with PostgreSQL, the live hints' bus;
   * null: PostgreSQL's table (and LISTEN/NOTIFY), or memory on SQLite.
   */
  redisUrl: string | null;
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
  /** Serve Prometheus metrics at /metrics. */
  metrics: boolean;
  /** Bearer token for /metrics; null: only the instance owner may read them. */
  metricsToken: string | null;
  /** Browser origins allowed to call the API with an API key (CORS); cookies never cross. */
  corsOrigins: string[];
  /** Images (and client thumbnails) with more pixels are refused before decoding (413 image_too_large). */
  maxImagePixels: number;
  /** Bytes of notes text and attachments each user may own; null: no quota (413 quota_exceeded). */
  storageQuotaBytes: number | null;
  /** Push subscriptions may name http: and private-network endpoints (tests, LAN push servers). */
  pushAllowPrivateEndpoints: boolean;
  /** The VAPID contact push services see (RFC 8292 `sub`); null: PUBLIC_URL when https. */
  vapidSubject: string | null;
  /** The OpenID provider's issuer URL; null: no single sign-on (docs/deploy.md#single-sign-on). */
  oidcIssuerUrl: string | null;
  oidcClientId: string | null;
  /** The client secret: OIDC_CLIENT_SECRET's, or the content of OIDC_CLIENT_SECRET_FILE. */
  oidcClientSecret: string | null;
  /** The sign-in button reads "Sign in with <oidcDisplayName>". */
  oidcDisplayName: string;
  oidcScopes: string;
  /** A provider account with no account here gets one, instead of a refusal. */
  oidcAutoCreateUsers: boolean;
  /** false: only single sign-on, and the owner's recovery sign-in (docs/deploy.md#owner-recovery). */
  passwordLogin: boolean;
  /** Live streams (GET /api/events) one user may hold open on a process; more are 429. */
  eventsMaxStreamsPerUser: number;
  /** Live streams a process holds open in all; more are 429. */
  eventsMaxStreams: number;
  /** The owner account the server's start creates when there is none yet (with ownerPassword). */
  ownerEmail: string | null;
  /** The password of that owner account; null: the owner is created in the web app (setup). */
  ownerPassword: string | null;
}

export class ConfigError extends Error {}

/**
 * One environment variable: its name, what it means (for `--help` and the README), its default
 * (a raw value parsed like any other, or null: the setting is null while unset) and its parser.
 */
interface Setting<T> {
  name: string;
  description: string;
  fallback: string | null;
  /** How the default reads for a person, when it is not a plain value. */
  fallbackText?: string;
  /**
   * A secret: `<NAME>_FILE` may name a file holding the value instead (Docker and Podman
   * secrets), and the setting's description says so.
   */
  secret?: boolean;
  parse(raw: string, name: string): T;
}

/** The one table of settings, in `--help` order: parsing, defaults, help and README come from it. */
const settings: { [K in keyof Config]: Setting<Config[K]> } = {
  port: {
    name: 'PORT',
    description: 'TCP port (0 picks a free one)',
    fallback: '3000',
    parse: (raw, name) => integer(name, raw, 0, 65535),
  },
  host: {
    name: 'HOST',
    description: 'Interface to bind; `0.0.0.0` for every interface',
    fallback: '127.0.0.1',
    parse: (raw, name) => nonEmpty(name, raw),
  },
  dataDir: {
    name: 'DATA_DIR',
    description: 'SQLite database (`notes.db`) and attachment files',
    fallback: './data',
    parse: (raw, name) => path.resolve(nonEmpty(name, raw)),
  },
  databaseUrl: {
    name: 'DATABASE_URL',
    description:
      '`postgres://user:password@host:5432/database`: PostgreSQL (13+) holds the data instead of SQLite, attachments included unless `ATTACHMENTS_DIR` is set (docs/deploy.md)',
    fallback: null,
    fallbackText: 'SQLite in `DATA_DIR`',
    secret: true,
    parse: parseDatabaseUrl,
  },
  databaseWaitSeconds: {
    name: 'DATABASE_WAIT_SECONDS',
    description:
      'How long the server, starting, retries an unreachable PostgreSQL (a database that starts next to it) before it stops',
    fallback: '60',
    parse: (raw, name) => integer(name, raw, 0, 3600),
  },
  attachmentsDir: {
    name: 'ATTACHMENTS_DIR',
    description:
      'Directory for attachment files, e.g. a volume every server process mounts (docs/attachments.md)',
    fallback: null,
    fallbackText: '`DATA_DIR/attachments` on SQLite, the database on PostgreSQL',
    parse: (raw, name) => path.resolve(nonEmpty(name, raw)),
  },
  redisUrl: {
    name: 'REDIS_URL',
    description:
      '`redis://[:password@]host:6379[/db]` (or `rediss://`): the rate limits (login, public shares) count in Redis instead of PostgreSQL, shared by every process, and with `DATABASE_URL` the live hints travel by Redis pub/sub (docs/deploy.md)',
    fallback: null,
    fallbackText: 'PostgreSQL with `DATABASE_URL`, else memory',
    secret: true,
    parse: (raw, name) => parseSecretUrl(raw, name, ['redis:', 'rediss:'], 'redis://:password@host:6379'),
  },
  publicUrl: {
    name: 'PUBLIC_URL',
    description:
      'External origin, e.g. `https://notes.example.com`: used in share links and accepted by the cross-origin guard; when https, the session cookie is always `Secure`',
    fallback: null,
    fallbackText: "the request's origin",
    parse: parsePublicUrl,
  },
  allowedHosts: {
    name: 'ALLOWED_HOSTS',
    description:
      "Comma-separated `host[:port]` names the server answers to besides `PUBLIC_URL`'s; with neither set: localhost and IP addresses (421 otherwise)",
    fallback: '',
    fallbackText: 'none',
    parse: parseAllowedHosts,
  },
  trustProxy: {
    name: 'TRUST_PROXY',
    description:
      'Trust `X-Forwarded-*` (client IP, HTTPS): `true`, a hop count, or comma-separated IPs/CIDRs of your proxies',
    fallback: 'false',
    parse: parseTrustProxy,
  },
  logLevel: {
    name: 'LOG_LEVEL',
    description: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`',
    fallback: 'info',
    parse: (raw, name) => oneOf(name, raw, LOG_LEVELS),
  },
  requestTimeoutSeconds: {
    name: 'REQUEST_TIMEOUT_SECONDS',
    description:
      'Seconds a client may take to send a whole request, body included (a 10 MiB upload needs 280 kbit/s at 300); then 408',
    fallback: '300',
    parse: (raw, name) => integer(name, raw, 1, 86400),
  },
  trashRetentionDays: {
    name: 'TRASH_RETENTION_DAYS',
    description: 'Trashed notes are deleted for good after this many days; `0` keeps them forever',
    fallback: '30',
    parse: (raw, name) => integer(name, raw, 0, 36500),
  },
  metrics: {
    name: 'METRICS',
    description: 'Serve Prometheus metrics at `/metrics` (`true` or `false`)',
    fallback: 'false',
    parse: (raw, name) => oneOf(name, raw, ['true', 'false']) === 'true',
  },
  metricsToken: {
    name: 'METRICS_TOKEN',
    description:
      'Bearer token a scraper sends to read `/metrics`; without it only the instance owner (session or API key) may',
    fallback: null,
    fallbackText: 'none',
    secret: true,
    parse: (raw, name) => {
      if (raw.length < 16)
        throw new ConfigError(`${name} must be at least 16 characters, so it cannot be guessed`);
      return raw;
    },
  },
  corsOrigins: {
    name: 'CORS_ORIGINS',
    description:
      'Comma-separated browser origins (e.g. `https://app.example.com,chrome-extension://<id>`) that may call the API with an API key; cookies never cross origins (docs/api.md, CORS)',
    fallback: '',
    fallbackText: 'none',
    parse: parseCorsOrigins,
  },
  maxImagePixels: {
    name: 'MAX_IMAGE_PIXELS',
    description:
      'Uploaded images with more pixels (width × height) are refused before decoding (413 `image_too_large`)',
    fallback: '40000000',
    parse: (raw, name) => integer(name, raw, 1, 1_000_000_000),
  },
  storageQuotaBytes: {
    name: 'STORAGE_QUOTA_MB',
    description:
      'MiB of notes text and attachments each user may own; `0` means no quota (413 `quota_exceeded`)',
    fallback: '0',
    parse: (raw, name) => {
      const mebibytes = integer(name, raw, 0, 1_000_000_000);
      return mebibytes === 0 ? null : mebibytes * 1024 * 1024;
    },
  },
  pushAllowPrivateEndpoints: {
    name: 'PUSH_ALLOW_PRIVATE_ENDPOINTS',
    description:
      'Send reminder pushes to `http:` and private-network push endpoints too (tests, a push server on your LAN); by default only `https:` on public addresses (docs/reminders.md)',
    fallback: 'false',
    parse: (raw, name) => oneOf(name, raw, ['true', 'false']) === 'true',
  },
  vapidSubject: {
    name: 'VAPID_SUBJECT',
    description:
      'Contact for push services, `mailto:admin@example.com` or an `https:` URL (Web Push VAPID `sub`)',
    fallback: null,
    fallbackText: '`PUBLIC_URL` if https, else `mailto:admin@localhost`',
    parse: (raw, name) => {
      if (!/^(mailto:\S+@\S+|https:\/\/\S+)$/.test(raw))
        throw new ConfigError(`${name} must be a mailto: address or an https: URL, got "${raw}"`);
      return raw;
    },
  },
  oidcIssuerUrl: {
    name: 'OIDC_ISSUER_URL',
    description:
      "OpenID Connect provider's issuer, e.g. `https://auth.example.com/realms/home`: single sign-on with it (docs/deploy.md#single-sign-on)",
    fallback: null,
    fallbackText: 'no single sign-on',
    parse: parseIssuerUrl,
  },
  oidcClientId: {
    name: 'OIDC_CLIENT_ID',
    description: 'Client id registered at the provider (required with `OIDC_ISSUER_URL`)',
    fallback: null,
    fallbackText: 'none',
    parse: (raw, name) => nonEmpty(name, raw),
  },
  oidcClientSecret: {
    name: 'OIDC_CLIENT_SECRET',
    description: 'Client secret registered at the provider (required with `OIDC_ISSUER_URL`)',
    fallback: null,
    fallbackText: 'none',
    secret: true,
    parse: (raw, name) => nonEmpty(name, raw),
  },
  oidcDisplayName: {
    name: 'OIDC_DISPLAY_NAME',
    description: 'Name on the sign-in button: "Sign in with <name>"',
    fallback: 'Single sign-on',
    parse: (raw, name) => nonEmpty(name, raw).trim().slice(0, 100),
  },
  oidcScopes: {
    name: 'OIDC_SCOPES',
    description: 'Space-separated scopes asked of the provider; must include `openid`',
    fallback: 'openid email profile',
    parse: parseScopes,
  },
  oidcAutoCreateUsers: {
    name: 'OIDC_AUTO_CREATE_USERS',
    description:
      'A provider account with no account here gets one at its first sign-on (`true`), instead of a refusal (`false`)',
    fallback: 'false',
    parse: (raw, name) => oneOf(name, raw, ['true', 'false']) === 'true',
  },
  passwordLogin: {
    name: 'PASSWORD_LOGIN',
    description:
      "`false` hides and refuses password sign-in, except the owner's recovery sign-in (docs/deploy.md#owner-recovery)",
    fallback: 'true',
    parse: (raw, name) => oneOf(name, raw, ['true', 'false']) === 'true',
  },
  eventsMaxStreamsPerUser: {
    name: 'EVENTS_MAX_STREAMS_PER_USER',
    description:
      'Live streams (`GET /api/events`) one user may hold open on a server process; more are refused with 429 (docs/sync.md#live-hints)',
    fallback: '32',
    parse: (raw, name) => integer(name, raw, 1, 10_000),
  },
  eventsMaxStreams: {
    name: 'EVENTS_MAX_STREAMS',
    description:
      'Live streams a server process holds open for all users together; more are refused with 429 (each holds a connection and ~10 KiB)',
    fallback: '10000',
    parse: (raw, name) => integer(name, raw, 1, 1_000_000),
  },
  ownerEmail: {
    name: 'OWNER_EMAIL',
    description:
      'Email of the owner account created at start when there is none yet (with `OWNER_PASSWORD`); the owner may also sign in without it',
    fallback: null,
    fallbackText: 'none',
    parse: (raw, name) => {
      if (!/^[^\s@]+@[^\s@]+$/.test(raw.trim())) throw new ConfigError(`${name} must be an email address`);
      return raw.trim();
    },
  },
  ownerPassword: {
    name: 'OWNER_PASSWORD',
    description:
      'Password of the owner account created at start when there is none yet, so that no one else can claim the instance first; ignored once an owner exists',
    fallback: null,
    fallbackText: 'the web app asks for it',
    secret: true,
    parse: (raw, name) => {
      if (raw.length < MIN_PASSWORD_LENGTH || raw.length > MAX_PASSWORD_LENGTH) {
        throw new ConfigError(
          `${name} must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`,
        );
      }
      return raw;
    },
  },
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const settingList = () => Object.values(settings) as Setting<unknown>[];

/** The variable names, in the order `--help` and the README list them. */
export const configVariableNames: readonly string[] = settingList().map((s) => s.name);

const shownFallback = (s: Setting<unknown>) => s.fallbackText ?? s.fallback ?? '';

/** The description, with the `_FILE` variant named for a secret. */
const describeSetting = (s: Setting<unknown>) =>
  s.secret ? `${s.description}; or \`${s.name}_FILE\`: a file holding it` : s.description;

export function configHelp(): string {
  const width = Math.max(...configVariableNames.map((name) => name.length)) + 2;
  const lines = settingList().map(
    (s) =>
      `  ${s.name.padEnd(width)}${describeSetting(s).replaceAll('`', '')} (default: ${shownFallback(s)})`,
  );
  return ['Usage: node dist/main.js [--help]', '', 'Environment variables:', ...lines].join('\n');
}

/** The README's configuration table (a test keeps the README equal to it). */
export function configMarkdownTable(): string {
  const rows = settingList().map((s) => {
    const fallback = s.fallbackText ?? `\`${s.fallback}\``;
    return `| \`${s.name}\` | ${fallback} | ${describeSetting(s)} |`;
  });
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

/** Reads and validates the environment; throws ConfigError with a message fit for a person. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const config: Partial<Record<keyof Config, unknown>> = {};
  for (const [key, setting] of Object.entries(settings) as [keyof Config, Setting<unknown>][]) {
    const given = setting.secret ? secretValue(env, setting.name) : env[setting.name];
    // A variable without a default is unset when empty too (PUBLIC_URL= in a compose file).
    const raw = setting.fallback === null && given === '' ? null : (given ?? setting.fallback);
    config[key] = raw === null ? null : setting.parse(raw, setting.name);
  }
  if (config.ownerEmail !== null && config.ownerPassword === null) {
    throw new ConfigError(
      'OWNER_EMAIL needs OWNER_PASSWORD (or OWNER_PASSWORD_FILE) to create the owner with',
    );
  }
  return checkSingleSignOn(config as Config);
}

/** The OIDC variables go together: an issuer needs a client id and a client secret. */
function checkSingleSignOn(config: Config): Config {
  if (config.oidcIssuerUrl === null) {
    if (config.oidcClientId !== null || config.oidcClientSecret !== null)
      throw new ConfigError('OIDC_CLIENT_ID and OIDC_CLIENT_SECRET need OIDC_ISSUER_URL');
    if (!config.passwordLogin)
      throw new ConfigError('PASSWORD_LOGIN=false needs single sign-on (OIDC_ISSUER_URL)');
    return config;
  }
  if (config.oidcClientId === null) throw new ConfigError('OIDC_ISSUER_URL needs OIDC_CLIENT_ID');
  if (config.oidcClientSecret === null)
    throw new ConfigError('OIDC_ISSUER_URL needs OIDC_CLIENT_SECRET (or OIDC_CLIENT_SECRET_FILE)');
  return config;
}

function parseIssuerUrl(raw: string, name: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL like https://auth.example.com, got "${raw}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ConfigError(`${name} must use https (or http on a private network), got "${raw}"`);
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw new ConfigError(`${name} must be the issuer URL alone (no query, fragment or credentials)`);
  return url.href;
}

function parseScopes(raw: string, name: string): string {
  const scopes = raw.split(/\s+/).filter((scope) => scope !== '');
  if (!scopes.includes('openid')) throw new ConfigError(`${name} must include openid, got "${raw}"`);
  if (scopes.some((scope) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)))
    throw new ConfigError(`${name} must be scope names separated by spaces, got "${raw}"`);
  return scopes.join(' ');
}

/**
 * A secret's value: the variable itself, or the contents of the file `<NAME>_FILE` names (its
 * one trailing newline removed), never both. A refusal names the file, never the value.
 */
function secretValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const file = env[`${name}_FILE`];
  if (file === undefined || file === '') return env[name];
  if (env[name] !== undefined && env[name] !== '') {
    throw new ConfigError(`Set either ${name} or ${name}_FILE, not both`);
  }
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(`${name}_FILE names "${file}", which cannot be read (${reason})`);
  }
}

function parseDatabaseUrl(raw: string, name: string): string {
  return parseSecretUrl(raw, name, ['postgres:', 'postgresql:'], 'postgres://user:password@host:5432/notes');
}

/** A URL with one of `schemes`; it may hold a password, so a refusal never repeats it. */
function parseSecretUrl(raw: string, name: string, schemes: string[], example: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL like ${example}`);
  }
  if (!schemes.includes(url.protocol)) {
    const allowed = schemes.map((scheme) => `${scheme}//`).join(' or ');
    throw new ConfigError(`${name} must start with ${allowed}, got "${url.protocol}"`);
  }
  return raw;
}

function integer(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${raw}`);
  return value;
}

function nonEmpty(name: string, raw: string): string {
  if (raw.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return raw;
}

/** One of `allowed`, case-insensitively. */
function oneOf<T extends string>(name: string, raw: string, allowed: readonly T[]): T {
  const value = raw.toLowerCase();
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return value as T;
}

function parsePublicUrl(raw: string, name: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL like https://notes.example.com, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must use http or https, got "${raw}"`);
  }
  return url.origin;
}

/** A DNS name or IPv4 address, or a bracketed IPv6 address, with an optional port. */
const HOST_ENTRY =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

function parseAllowedHosts(raw: string, name: string): string[] {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    if (!HOST_ENTRY.test(entry)) {
      throw new ConfigError(
        `${name} entry "${entry}" is not a host name like notes.example.com or notes.lan:8080`,
      );
    }
  }
  return entries;
}

function parseTrustProxy(raw: string, name: string): Config['trustProxy'] {
  const value = raw.trim().toLowerCase();
  if (value === '' || value === 'false' || value === '0') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return integer(name, value, 0, 100);
  const entries = value.split(',').map((s) => s.trim());
  for (const entry of entries) {
    if (
      !/^[0-9a-f.:]+(\/\d{1,3})?$/.test(entry) &&
      entry !== 'loopback' &&
      entry !== 'linklocal' &&
      entry !== 'uniquelocal'
    ) {
      throw new ConfigError(
        `${name} entry "${entry}" is not an IP address, CIDR range, true, false or a number`,
      );
    }
  }
  return entries;
}

/** An origin as browsers send it: scheme://host[:port], nothing after. */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]+$/;

function parseCorsOrigin(entry: string, name: string): string {
  const origin = entry.toLowerCase().replace(/\/$/, '');
  const invalid = () =>
    new ConfigError(`${name} entry "${entry}" is not an origin like https://app.example.com`);
  if (!ORIGIN.test(origin)) throw invalid();
  // Other schemes (browser extensions) as written; http(s) as browsers send it (no default port).
  if (!/^https?:/.test(origin)) return origin;
  try {
    return new URL(origin).origin;
  } catch {
    throw invalid();
  }
}

function parseCorsOrigins(raw: string, name: string): string[] {
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => parseCorsOrigin(entry, name));
}
