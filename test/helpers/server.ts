import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { ScryptCost } from '../../src/features/auth/passwords.js';

/**
 * scrypt at the lowest cost for test servers: production's cost (D-AUTH-7, ~50–100 ms a hash)
 * made fixture users the suite's largest single cost. auth.test.ts pins the production cost.
 */
export const TEST_PASSWORD_COST: ScryptCost = { N: 2, r: 1, p: 1 };

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
    /** Defaults to TEST_PASSWORD_COST. */
    passwordCost?: ScryptCost;
  } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', ...options.env });
  const app = await buildApp(config, {
    logger: options.logStream ? undefined : false,
    logStream: options.logStream,
    clock: options.clock,
    onQuery: options.onQuery,
    passwordCost: options.passwordCost ?? TEST_PASSWORD_COST,
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
 * Node arguments that run the server's entry point (src/main) with `args`: the compiled main.js
 * when this helper runs compiled (`npm test`), main.ts through tsx when it runs through tsx.
 */
export function mainArguments(...args: string[]): string[] {
  const compiled = import.meta.url.endsWith('.js');
  const main = fileURLToPath(new URL(`../../src/main.${compiled ? 'js' : 'ts'}`, import.meta.url));
  return compiled ? [main, ...args] : ['--import', 'tsx', main, ...args];
}
