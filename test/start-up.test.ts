import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { freePort } from '../bench/processes.js';
import { deploymentSummary } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { OpenDatabase } from '../src/db/connection.js';
import { migrations } from '../src/db/migrations/index.js';
import { clientOf } from './helpers/client.js';
import { databaseUrlFor, dropDatabaseOf, onPostgres } from './helpers/postgres.js';
import { mainArguments, spawnServer, startServer, tempDataDir } from './helpers/server.js';

/** The server's entry point run to its end: exit code, stdout and stderr. */
async function runToExit(env: Record<string, string>) {
  const child = spawn(process.execPath, mainArguments(), {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const [code] = await once(child, 'exit');
  return { code: code as number, stdout, stderr };
}

describe('start-up says what it runs on (one log line)', () => {
  it('names version, database, Redis, attachments and the migrations this start ran', async () => {
    const stream = new PassThrough();
    let log = '';
    stream.on('data', (chunk) => {
      log += chunk;
    });
    const lineOf = () =>
      log
        .split('\n')
        .filter((line) => line.includes('"msg":"Keepsake Notes '))
        .map((line) => JSON.parse(line));
    const first = await startServer({ logStream: stream, env: { LOG_LEVEL: 'info' } });
    await first.close({ keepData: true });
    const second = await startServer({
      dataDir: first.dataDir,
      logStream: stream,
      env: { LOG_LEVEL: 'info' },
    });
    await second.close();

    const [fresh, restarted] = lineOf();
    assert.ok(fresh && restarted, log);
    assert.equal(fresh.version, '0.2.0');
    if (onPostgres) {
      assert.match(fresh.database, /^PostgreSQL 127\.0\.0\.1:5432\/notes_test_/);
      assert.equal(fresh.attachments, 'in the database');
    } else {
      assert.equal(fresh.database, `SQLite ${path.join(first.dataDir, 'notes.db')}`);
      assert.equal(fresh.attachments, path.join(first.dataDir, 'attachments'));
    }
    assert.equal(fresh.redis, 'none');
    assert.deepEqual(fresh.migrationsRun, Object.keys(migrations));
    assert.match(fresh.msg, /^Keepsake Notes 0\.2\.0 on (SQLite|PostgreSQL) .*; ran migrations 0001_core, /);
    assert.deepEqual(restarted.migrationsRun, []);
    assert.match(restarted.msg, /schema up to date$/);
    assert.doesNotMatch(log, /:postgres@/, 'no password');
  });

  it('reduces every URL to where it points, never its password', () => {
    const database = { migrationsRun: [] } as unknown as OpenDatabase;
    const { summary, message } = deploymentSummary(
      loadConfig({
        DATABASE_URL: 'postgres://notes:hunter2@db.internal/notes',
        REDIS_URL: 'rediss://:hunter2@cache.internal:6380/2',
        ATTACHMENTS_DIR: '/srv/attachments',
      }),
      database,
    );
    assert.equal(summary.database, 'PostgreSQL db.internal:5432/notes');
    assert.equal(summary.redis, 'cache.internal:6380/2');
    assert.equal(summary.attachments, '/srv/attachments');
    assert.doesNotMatch(JSON.stringify({ summary, message }), /hunter2/);
  });
});

describe('an unreachable PostgreSQL at start', () => {
  it('is retried with backoff, then reported in one readable line with exit code 1', async () => {
    const port = await freePort();
    const { code, stdout, stderr } = await runToExit({
      DATA_DIR: tempDataDir(),
      DATABASE_URL: `postgres://notes:hunter2@127.0.0.1:${port}/notes`,
      DATABASE_WAIT_SECONDS: '1',
    });
    assert.equal(code, 1, stderr);
    assert.match(
      stdout,
      new RegExp(`PostgreSQL at 127.0.0.1:${port}/notes is not reachable yet .*trying again in 0.5 s`),
    );
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(
      stderr,
      new RegExp(`^Cannot connect to PostgreSQL at 127.0.0.1:${port}/notes \\(waited 1 s\\): .*ECONNREFUSED`),
    );
    assert.doesNotMatch(stdout + stderr, /hunter2/);
  });

  it('is waited for: the server starts once it comes up', {
    skip: !onPostgres && 'no TEST_DATABASE_URL',
  }, async () => {
    const dataDir = tempDataDir();
    const real = new URL(await databaseUrlFor(dataDir));
    const url = new URL(real);
    url.port = String(await freePort());
    // The database "comes up" once the server has said it is not reachable: a proxy to the real one.
    const proxy = net.createServer((socket) => {
      const upstream = net.connect(Number(real.port || 5432), real.hostname);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    const child = spawn(process.execPath, mainArguments(), {
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', DATA_DIR: dataDir, DATABASE_URL: url.toString() },
    });
    const exited = once(child, 'exit');
    try {
      let output = '';
      const listening = new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk) => {
          output += chunk;
          if (/is not reachable yet/.test(output) && !proxy.listening)
            proxy.listen(Number(url.port), '127.0.0.1');
          const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
          if (match) resolve(match[1]!);
        });
        child.on('exit', () => reject(new Error(`exited: ${output}`)));
      });
      const address = await listening;
      assert.equal((await clientOf(address).get('/api/health')).status, 200);
    } finally {
      child.kill('SIGTERM');
      await exited;
      proxy.close();
      await dropDatabaseOf(dataDir);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the owner account from OWNER_EMAIL and OWNER_PASSWORD_FILE', () => {
  it('is created at the first start, and never changed by a later one', async () => {
    const dataDir = tempDataDir();
    const secret = path.join(dataDir, '..', `${path.basename(dataDir)}-owner-password`);
    fs.writeFileSync(secret, 'correct horse battery\n');
    const env = { OWNER_EMAIL: 'me@example.com', OWNER_PASSWORD_FILE: secret };
    const first = await startServer({ dataDir, env });
    const client = clientOf(first);
    assert.equal((await client.get('/api/auth/status')).body.setupRequired, false);
    const setup = await client.post('/api/auth/setup', { password: 'someone else first' });
    assert.equal(setup.status, 400, 'no one can claim the instance');
    const login = await client.post('/api/auth/login', {
      email: 'me@example.com',
      password: 'correct horse battery',
    });
    assert.equal(login.status, 200);
    await first.close({ keepData: true });

    fs.writeFileSync(secret, 'another password\n');
    const second = await startServer({ dataDir, env });
    try {
      const again = clientOf(second);
      assert.equal((await again.post('/api/auth/login', { password: 'another password' })).status, 401);
      assert.equal((await again.post('/api/auth/login', { password: 'correct horse battery' })).status, 200);
    } finally {
      await second.close();
      fs.rmSync(secret, { force: true });
    }
  });
});

describe('shutdown (D-OPS-2)', () => {
  it('finishes within seconds of SIGTERM even while a client holds a request open, and closes the database', async () => {
    const dataDir = tempDataDir();
    const server = await spawnServer({ DATA_DIR: dataDir });
    const exited = once(server.child, 'exit');
    // An upload that stalls: its headers promise a body that never comes.
    const stalled = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    stalled.on('error', () => {});
    try {
      await once(stalled, 'connect');
      stalled.write('POST /api/import HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\nPK');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const signalled = Date.now();
      server.child.kill('SIGTERM');
      const [code] = await exited;
      // Without the grace period it waited for the request's timeout (REQUEST_TIMEOUT_SECONDS, 300 s).
      assert.ok(Date.now() - signalled < 15_000, `exited ${Date.now() - signalled} ms after SIGTERM`);
      assert.equal(code, 0, server.output());
      assert.match(server.output(), /requests still open 8 s after SIGTERM/);
    } finally {
      stalled.destroy();
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('closes at once with a connection open that has sent nothing (one before the close, one during it)', async () => {
    const server = await startServer();
    const port = Number(new URL(server.url).port);
    const silent: net.Socket[] = [];
    const openSilent = async () => {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => {});
      silent.push(socket);
      await Promise.all([once(socket, 'connect'), once(server.app.server, 'connection')]);
    };
    try {
      await openSilent();
      // The server's own close, without the test helper's closeAllConnections.
      const closing = server.app.close();
      await openSilent().catch(() => {}); // refused once it has stopped listening: also fine
      // Node 20 held these until their headers timed out, a minute later.
      const waited = await Promise.race([
        closing.then(() => 'closed'),
        new Promise((resolve) => setTimeout(resolve, 10_000, 'still open after 10 s')),
      ]);
      assert.equal(waited, 'closed');
    } finally {
      for (const socket of silent) socket.destroy();
      await server.close();
    }
  });
});
