import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';

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

/** Boots the real app on an ephemeral loopback port with a fresh (or given) DATA_DIR. */
export async function startServer(
  options: {
    env?: Record<string, string>;
    dataDir?: string;
    clock?: Clock;
    logStream?: NodeJS.WritableStream;
    onQuery?: (sql: string) => void;
  } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', ...options.env });
  const app = await buildApp(config, {
    logger: options.logStream ? undefined : false,
    logStream: options.logStream,
    clock: options.clock,
    onQuery: options.onQuery,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
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
      await app.close();
      if (!keepData) fs.rmSync(dataDir, { recursive: true, force: true });
    },
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
