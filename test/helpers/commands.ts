import { mock } from 'node:test';
import { runCommand } from '../../src/cli/commands.js';
import { loadConfig } from '../../src/config.js';
import { databaseUrlFor, onPostgres } from './postgres.js';

/** A command's configuration for a DATA_DIR (and its PostgreSQL database where tests run on one). */
export const commandConfig = async (dataDir: string) =>
  loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...(onPostgres ? { DATABASE_URL: await databaseUrlFor(dataDir) } : {}),
  });

/** Runs a command in this process against a DATA_DIR, capturing what it prints. */
export async function runIn(dataDir: string, ...argv: string[]) {
  const printed: string[] = [];
  const log = mock.method(console, 'log', (line: string) => printed.push(line));
  const error = mock.method(console, 'error', (line: string) => printed.push(line));
  try {
    const [name, ...args] = argv;
    const code = await runCommand(name!, args, await commandConfig(dataDir));
    return { code, output: printed.join('\n') };
  } finally {
    log.mock.restore();
    error.mock.restore();
  }
}

/** Runs a command against a running test server's DATA_DIR. */
export const run = (server: { dataDir: string }, ...argv: string[]) => runIn(server.dataDir, ...argv);
