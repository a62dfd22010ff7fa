import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { ScryptCost } from '../../src/features/users/passwords.js';
import type { LingerLimits } from '../../src/http/requestBody.js';
import { type ClientTarget, type SetupProfile, setupOwner, type TestClient } from './client.js';
import { TEST_PASSWORD_COST } from './passwordCost.js';
import { databaseUrlFor, dropDatabaseOf, onPostgres } from './postgres.js';

export interface TestServer {
  app: FastifyInstance;
  url: string;
  dataDir: string;
  /** Stops the server; the data directory is kept when `keepData` is set (restart tests). */
  close(options?: { keepData?: boolean }): Promise<void>;
}

export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'notes-test-'));
}

const SCHEDULER_TICK =
  /^select "(note_id|id)" from "(reminders|reminder_rings)" where "(next_at|claimed_until)" <= (\?|\$1)/;

/**
 * A statement that runs on its own time, not a request's: the reminder scheduler's tick (every
 * second; on a slow machine one lands inside a request) and the live hints' `pg_notify`, which
 * runs after a write's COMMIT unawaited by its response (so it may land in the next request).
 * Tests that count a request's statements leave these out.
 */
export function isBackgroundQuery(sql: string): boolean {
  return SCHEDULER_TICK.test(sql) || sql.startsWith('SELECT pg_notify');
}

export interface ServerOptions {
  env?: Record<string, string>;
  dataDir?: string;
  clock?: Clock;
  logStream?: NodeJS.WritableStream;
  onQuery?: (sql: string) => void;
  /** Defaults to TEST_PASSWORD_COST. */
  passwordCost?: ScryptCost;
  /** Default: a free one. A restart on the same port keeps the browser's origin (web app tests). */
  port?: number;
  /** The web app bundle to serve (BuildOptions.webRoot); default this checkout's dist/web. */
  webRoot?: string | null;
  /** BuildOptions.linger: how long a refused body is still read after its answer. */
  linger?: LingerLimits;
}

/** Boots the real app on an ephemeral loopback port with a fresh (or given) DATA_DIR. */
export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  const database = onPostgres ? { DATABASE_URL: await databaseUrlFor(dataDir) } : {};
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    ...database,
    ...options.env,
  });
  const app = await buildApp(config, {
    logger: options.logStream ? undefined : false,
    logStream: options.logStream,
    clock: options.clock,
    onQuery: options.onQuery,
    passwordCost: options.passwordCost ?? TEST_PASSWORD_COST,
    webRoot: options.webRoot,
    linger: options.linger,
  });
  await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  let closed = false;
  return {
    app,
    url: `http://127.0.0.1:${address.port}`,
    dataDir,
    async close({ keepData = false } = {}) {
      if (closed) return;
      closed = true;
      const closing = app.close();
      // The test is done with its connections, but a fetch in this process can have read a whole
      // response before the server counted that connection idle; close() would then wait out the
      // keep-alive timeout (72 s) for it.
      app.server.closeAllConnections();
      await closing;
      if (keepData) return;
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (onPostgres) await dropDatabaseOf(dataDir);
    },
  };
}

let lastMade: Promise<unknown> = Promise.resolve();

/**
 * What `make` returns, made in a `before` hook registered where this is called. `current()` reads
 * it from tests and later hooks; `made()` is undefined while (or if) it has not been made.
 */
function madeInBefore<T>(helper: string, make: () => Promise<T>): { current(): T; made(): T | undefined } {
  let made: T | undefined;
  before(async () => {
    // Node 20 starts a file's top-level `before` hooks together, without waiting for each: so
    // each waits here for the one made before it (a top-level useOwner() for its useServer()).
    const making = lastMade.catch(() => undefined).then(make);
    lastMade = making;
    made = await making;
  });
  return {
    made: () => made,
    current() {
      if (made === undefined) throw new Error(`${helper}: made in before(); read it from tests and hooks`);
      return made;
    },
  };
}

/**
 * One server for the tests of the file (called at the top level) or of the describe block it is
 * called in: started in `before`, closed in `after`. Its properties are readable from the tests
 * and hooks on. For tests that do not need a fresh instance of their own.
 */
export function useServer(options: ServerOptions = {}): TestServer {
  const server = madeInBefore('useServer()', () => startServer(options));
  after(() => server.made()?.close());
  return {
    get app() {
      return server.current().app;
    },
    get url() {
      return server.current().url;
    },
    get dataDir() {
      return server.current().dataDir;
    },
    close: (closeOptions) => server.current().close(closeOptions),
  };
}

/**
 * The owner of a `useServer()` server, set up in a `before` registered after the server's (so it
 * runs once the server has started). The returned client reads the signed-in one, so it can be
 * held from the describe block on and used in tests and later hooks. It injects plain requests
 * into the app unless `overSocket` is set, for tests of what happens to connections (and the
 * browser tests, whose owner's session cookie goes into Chromium). `profile`: the owner's details.
 */
export function useOwner(
  server: ClientTarget,
  { overSocket = false, ...profile }: { overSocket?: boolean } & SetupProfile = {},
): TestClient {
  const owner = madeInBefore('useOwner()', () => setupOwner(overSocket ? server.url : server, profile));
  return {
    get baseUrl() {
      return owner.current().baseUrl;
    },
    get app() {
      return owner.current().app;
    },
    get cookies() {
      return owner.current().cookies;
    },
    request: (method, path, options) => owner.current().request(method, path, options),
    get: (path, options) => owner.current().get(path, options),
    post: (path, json, options) => owner.current().post(path, json, options),
    patch: (path, json, options) => owner.current().patch(path, json, options),
    delete: (path, options) => owner.current().delete(path, options),
  };
}

/** A server logging everything (trace level) into `log()`, for tests of what reaches the log. */
export async function startLoggedServer(): Promise<TestServer & { log(): string }> {
  const stream = new PassThrough();
  let output = '';
  stream.on('data', (chunk) => {
    output += chunk;
  });
  const server = await startServer({ logStream: stream, env: { LOG_LEVEL: 'trace' } });
  return { ...server, log: () => output };
}

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(public current = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/**
 * Node arguments that run the server's entry point with `args`: under `npm test` (this helper
 * compiled into a bundle) the main.js that test/build.mjs writes next to it, otherwise main.ts
 * through tsx. Paths are from the repository root, where tests run.
 */
export function mainArguments(...args: string[]): string[] {
  return import.meta.url.endsWith('.js')
    ? [path.resolve('.tmp/test-build/src/main.js'), ...args]
    : ['--import', 'tsx', path.resolve('src/main.ts'), ...args];
}

/**
 * The server's entry point in a child process with `env` added to this one's, once it listens:
 * its URL, the process, and everything it printed so far.
 */
export async function spawnServer(
  env: Record<string, string>,
): Promise<{ url: string; child: ChildProcessWithoutNullStreams; output(): string }> {
  const child = spawn(process.execPath, mainArguments(), {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    // A crash before listening prints to stderr: keep it for the error.
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('exit', () => reject(new Error(`exited early: ${output}`)));
  });
  return { url, child, output: () => output };
}

export type ServerProcess = Awaited<ReturnType<typeof spawnServer>>;

/**
 * Environment for spawnServer whose process's Date.now() runs `ms` ahead (negative: behind), as
 * on a machine with a skewed clock (test/helpers/skewedClock.mjs).
 */
export function skewedClockEnv(ms: number): Record<string, string> {
  const preload = pathToFileURL(path.resolve('test/helpers/skewedClock.mjs')).href;
  return { NODE_OPTIONS: `--import=${preload}`, CLOCK_SKEW_MS: String(ms) };
}

/**
 * `count` server processes on one fresh PostgreSQL database (TEST_DATABASE_URL) for `work`,
 * stopped and the database dropped afterwards, whatever happens. They share one DATA_DIR, or
 * with `separateDataDirs` each has its own (machines with no shared disk); process `i` gets
 * `envOf(i)` added to its environment.
 */
export async function withServerProcesses<T>(
  count: number,
  work: (servers: ServerProcess[]) => Promise<T>,
  {
    separateDataDirs = false,
    envOf = () => ({}),
  }: { separateDataDirs?: boolean; envOf?: (i: number) => Record<string, string> } = {},
) {
  const dataDir = tempDataDir();
  const dataDirs = Array.from({ length: count }, (_, i) =>
    separateDataDirs && i > 0 ? tempDataDir() : dataDir,
  );
  const databaseUrl = await databaseUrlFor(dataDir);
  const servers: ServerProcess[] = [];
  try {
    for (const [i, dir] of dataDirs.entries()) {
      servers.push(await spawnServer({ DATA_DIR: dir, DATABASE_URL: databaseUrl, ...envOf(i) }));
    }
    return await work(servers);
  } finally {
    for (const server of servers) {
      const exited = once(server.child, 'exit');
      server.child.kill('SIGTERM');
      await exited;
    }
    await dropDatabaseOf(dataDir);
    for (const dir of new Set(dataDirs)) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Fails with what the server printed if it has exited. */
export function assertAlive(server: ServerProcess) {
  assert.equal(server.child.exitCode, null, `the server exited:\n${server.output().slice(-3000)}`);
}

/** Polls `condition` every 50 ms for at most 20 s, as long as `server` lives. */
export async function waitFor(
  server: ServerProcess,
  what: string,
  condition: () => boolean | Promise<boolean>,
) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    assertAlive(server);
    if (
      await Promise.resolve()
        .then(condition)
        .catch(() => false)
    )
      return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
