import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { commandsHelp } from '../src/cli/commands.js';
import {
  ConfigError,
  configHelp,
  configMarkdownTable,
  configVariableNames,
  loadConfig,
} from '../src/config.js';
import { mainArguments } from './helpers/server.js';

describe('configuration (D-OPS-1)', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.dataDir, path.resolve('data'));
    assert.equal(config.databaseUrl, null);
    assert.equal(config.redisUrl, null);
    assert.equal(config.publicUrl, null);
    assert.deepEqual(config.allowedHosts, []);
    assert.equal(config.trustProxy, false);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.requestTimeoutSeconds, 300);
    assert.equal(config.trashRetentionDays, 30);
    assert.deepEqual(config.corsOrigins, []);
    assert.equal(config.maxImagePixels, 40_000_000);
    assert.equal(config.storageQuotaBytes, null);
    assert.equal(config.attachmentsDir, null);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATA_DIR: '/srv/notes',
      DATABASE_URL: 'postgres://notes:secret@db.internal:5432/notes',
      ATTACHMENTS_DIR: '/mnt/shared/../notes-attachments',
      REDIS_URL: 'redis://:secret@cache.internal:6379/2',
      PUBLIC_URL: 'https://notes.example.com/ignored/path',
      ALLOWED_HOSTS: ' Notes.LAN:8080, ,192.168.1.20,[::1]:3000 ',
      TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
      LOG_LEVEL: 'WARN',
      REQUEST_TIMEOUT_SECONDS: '600',
      TRASH_RETENTION_DAYS: '0',
      CORS_ORIGINS: ' https://App.example.com/, http://localhost:80 ,chrome-extension://abcdefgh,',
      MAX_IMAGE_PIXELS: '1000000',
      STORAGE_QUOTA_MB: '512',
      PUSH_ALLOW_PRIVATE_ENDPOINTS: 'TRUE',
      VAPID_SUBJECT: 'mailto:admin@example.com',
      OIDC_ISSUER_URL: 'https://auth.example.com/realms/home',
      OIDC_CLIENT_ID: 'notes',
      OIDC_CLIENT_SECRET: 'client secret',
      OIDC_DISPLAY_NAME: ' Household ID ',
      OIDC_SCOPES: ' openid  email groups ',
      OIDC_AUTO_CREATE_USERS: 'TRUE',
      PASSWORD_LOGIN: 'false',
      EVENTS_MAX_STREAMS_PER_USER: '8',
      EVENTS_MAX_STREAMS: '500',
    });
    assert.deepEqual(config, {
      port: 8080,
      host: '0.0.0.0',
      dataDir: '/srv/notes',
      databaseUrl: 'postgres://notes:secret@db.internal:5432/notes',
      attachmentsDir: '/mnt/notes-attachments',
      redisUrl: 'redis://:secret@cache.internal:6379/2',
      publicUrl: 'https://notes.example.com',
      allowedHosts: ['notes.lan:8080', '192.168.1.20', '[::1]:3000'],
      trustProxy: ['10.0.0.0/8', '127.0.0.1'],
      logLevel: 'warn',
      requestTimeoutSeconds: 600,
      trashRetentionDays: 0,
      metrics: false,
      metricsToken: null,
      // As browsers send Origin: lower case, no trailing slash, no default port.
      corsOrigins: ['https://app.example.com', 'http://localhost', 'chrome-extension://abcdefgh'],
      maxImagePixels: 1_000_000,
      storageQuotaBytes: 512 * 1024 * 1024,
      pushAllowPrivateEndpoints: true,
      vapidSubject: 'mailto:admin@example.com',
      oidcIssuerUrl: 'https://auth.example.com/realms/home',
      oidcClientId: 'notes',
      oidcClientSecret: 'client secret',
      oidcDisplayName: 'Household ID',
      oidcScopes: 'openid email groups',
      oidcAutoCreateUsers: true,
      passwordLogin: false,
      eventsMaxStreamsPerUser: 8,
      eventsMaxStreams: 500,
      databaseWaitSeconds: 60,
      ownerEmail: null,
      ownerPassword: null,
    });
    assert.equal(loadConfig({ STORAGE_QUOTA_MB: '0' }).storageQuotaBytes, null);
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
  });

  it('refuses bad values with a message naming the variable', () => {
    const bad: Record<string, string>[] = [
      { PORT: 'eighty' },
      { PORT: '70000' },
      { PORT: '-1' },
      { LOG_LEVEL: 'loud' },
      { PUBLIC_URL: 'notes.example.com' },
      { PUBLIC_URL: 'ftp://notes.example.com' },
      { ALLOWED_HOSTS: 'https://notes.example.com' },
      { ALLOWED_HOSTS: 'notes.example.com/path' },
      { ALLOWED_HOSTS: 'notes..example.com' },
      { TRUST_PROXY: 'yes please' },
      { TRASH_RETENTION_DAYS: '1.5' },
      { REQUEST_TIMEOUT_SECONDS: '0' },
      { REQUEST_TIMEOUT_SECONDS: 'forever' },
      { DATA_DIR: '' },
      { CORS_ORIGINS: '*' },
      { CORS_ORIGINS: 'https://app.example.com/path' },
      { CORS_ORIGINS: 'app.example.com' },
      { CORS_ORIGINS: 'https://ok.example.com, null' },
      { MAX_IMAGE_PIXELS: '0' },
      { MAX_IMAGE_PIXELS: '40e6' },
      { STORAGE_QUOTA_MB: '-1' },
      { STORAGE_QUOTA_MB: '1GB' },
      { DATABASE_URL: 'mysql://notes@db/notes' },
      { DATABASE_URL: 'notes@db/notes' },
      { REDIS_URL: 'postgres://db/notes' },
      { REDIS_URL: 'cache:6379' },
      { PUSH_ALLOW_PRIVATE_ENDPOINTS: 'yes' },
      { VAPID_SUBJECT: 'admin@example.com' },
      { VAPID_SUBJECT: 'http://notes.example.com' },
    ];
    for (const env of bad) {
      const [name] = Object.keys(env);
      assert.throws(() => loadConfig(env), new RegExp(name!), JSON.stringify(env));
    }
  });

  it('never repeats DATABASE_URL or REDIS_URL, which may hold a password', () => {
    for (const name of ['DATABASE_URL', 'REDIS_URL']) {
      assert.throws(
        () => loadConfig({ [name]: 'secret-password@db' }),
        (error: Error) => {
          assert.match(error.message, new RegExp(name));
          assert.doesNotMatch(error.message, /secret-password/);
          return true;
        },
      );
    }
  });

  it('reads each secret from <NAME>_FILE (Docker and Podman secrets), validated like the variable', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'notes-secrets-'));
    const file = (name: string, text: string) => {
      writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    try {
      const config = loadConfig({
        DATABASE_URL_FILE: file('db', 'postgres://notes:s3cret@db:5432/notes\n'),
        REDIS_URL_FILE: file('redis', 'redis://:s3cret@cache:6379/1'),
        METRICS_TOKEN_FILE: file('token', 'a-token-of-32-characters-or-so!!\n'),
        OWNER_EMAIL: 'me@example.com',
        OWNER_PASSWORD_FILE: file('owner', 'correct horse battery\n'),
      });
      assert.equal(config.databaseUrl, 'postgres://notes:s3cret@db:5432/notes');
      assert.equal(config.redisUrl, 'redis://:s3cret@cache:6379/1');
      assert.equal(config.metricsToken, 'a-token-of-32-characters-or-so!!');
      assert.equal(config.ownerPassword, 'correct horse battery');
      const refusals: [Record<string, string>, RegExp][] = [
        [{ DATABASE_URL_FILE: file('bad', 'mysql://root:s3cret@db/notes') }, /DATABASE_URL must start with/],
        [{ METRICS_TOKEN_FILE: file('short', 'short') }, /METRICS_TOKEN must be at least 16/],
        [
          { REDIS_URL_FILE: path.join(dir, 'missing') },
          /REDIS_URL_FILE names ".*missing", which cannot be read \(ENOENT\)/,
        ],
        [
          { DATABASE_URL: 'postgres://a@b/c', DATABASE_URL_FILE: file('db2', 'postgres://a@b/c') },
          /Set either DATABASE_URL or DATABASE_URL_FILE, not both/,
        ],
        [{ OWNER_PASSWORD_FILE: file('weak', 'short\n') }, /OWNER_PASSWORD must be 8 to 1024 characters/],
        [{ OWNER_EMAIL: 'me@example.com' }, /OWNER_EMAIL needs OWNER_PASSWORD/],
      ];
      for (const [env, message] of refusals) {
        assert.throws(
          () => loadConfig(env),
          (err: Error) =>
            err instanceof ConfigError && message.test(err.message) && !/s3cret/.test(err.message),
          JSON.stringify(env),
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--help prints every variable and exits 0', () => {
    const result = spawnSync(process.execPath, mainArguments('--help'), { encoding: 'utf8' });
    assert.equal(result.status, 0);
    for (const name of configVariableNames) assert.ok(result.stdout.includes(name), name);
    assert.equal(result.stdout.trim(), `${configHelp()}\n\n${commandsHelp()}`);
  });

  it('a bad value stops start-up with exit code 1 and a clear message', () => {
    const result = spawnSync(process.execPath, mainArguments(), {
      encoding: 'utf8',
      env: { ...process.env, PORT: 'abc' },
    });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /Configuration error: PORT must be a whole number, got "abc"/);
  });
});

describe('the configuration table', () => {
  it('is the README table, so the README lists every variable with its real default', () => {
    const readme = readFileSync('README.md', 'utf8');
    assert.ok(
      readme.includes(configMarkdownTable()),
      'README.md must contain configMarkdownTable(): run npm run docs:tables',
    );
    for (const name of configVariableNames) assert.match(configHelp(), new RegExp(`^  ${name} `, 'm'));
  });

  it('treats an empty variable without a default as unset', () => {
    assert.equal(loadConfig({ PUBLIC_URL: '' }).publicUrl, null);
  });
});
