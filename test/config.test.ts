import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { configHelp, loadConfig } from '../src/config.js';

const MAIN = path.resolve('src/main.ts');

describe('configuration (D-OPS-1)', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.dataDir, path.resolve('data'));
    assert.equal(config.publicUrl, null);
    assert.deepEqual(config.allowedHosts, []);
    assert.equal(config.trustProxy, false);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.requestTimeoutSeconds, 300);
    assert.equal(config.trashRetentionDays, 30);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATA_DIR: '/srv/notes',
      PUBLIC_URL: 'https://notes.example.com/ignored/path',
      ALLOWED_HOSTS: ' Notes.LAN:8080, ,192.168.1.20,[::1]:3000 ',
      TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
      LOG_LEVEL: 'WARN',
      REQUEST_TIMEOUT_SECONDS: '600',
      TRASH_RETENTION_DAYS: '0',
    });
    assert.deepEqual(config, {
      port: 8080,
      host: '0.0.0.0',
      dataDir: '/srv/notes',
      publicUrl: 'https://notes.example.com',
      allowedHosts: ['notes.lan:8080', '192.168.1.20', '[::1]:3000'],
      trustProxy: ['10.0.0.0/8', '127.0.0.1'],
      logLevel: 'warn',
      requestTimeoutSeconds: 600,
      trashRetentionDays: 0,
    });
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
    ];
    for (const env of bad) {
      const [name] = Object.keys(env);
      assert.throws(() => loadConfig(env), new RegExp(name!), JSON.stringify(env));
    }
  });

  it('--help prints every variable and exits 0', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', MAIN, '--help'], { encoding: 'utf8' });
    assert.equal(result.status, 0);
    for (const name of [
      'PORT',
      'HOST',
      'DATA_DIR',
      'PUBLIC_URL',
      'ALLOWED_HOSTS',
      'TRUST_PROXY',
      'LOG_LEVEL',
      'REQUEST_TIMEOUT_SECONDS',
      'TRASH_RETENTION_DAYS',
    ]) {
      assert.ok(result.stdout.includes(name), name);
    }
    assert.equal(result.stdout.trim(), configHelp().trim());
  });

  it('a bad value stops start-up with exit code 1 and a clear message', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', MAIN], {
      encoding: 'utf8',
      env: { ...process.env, PORT: 'abc' },
    });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /Configuration error: PORT must be a whole number, got "abc"/);
  });
});
