import { mock } from 'node:test';
import { runCommand } from '../../src/cli/commands.js';
import { loadConfig } from '../../src/config.js';
import { databaseUrlFor, onPostgres } from './postgres.js';

/** The DATABASE_URL of a DATA_DIR's database where tests run on PostgreSQL; none on SQLite. */
export const databaseOf = async (server: { dataDir: string }) =>
  onPostgres ? { DATABASE_URL: await databaseUrlFor(server.dataDir) } : {};

/** Runs a command in this process against a DATA_DIR, capturing what it prints. */
export async function runIn(dataDir: string, ...argv: string[]) {
  const printed: string[] = [];
  const log = mock.method(console, 'log', (line: string) => printed.push(line));
  const error = mock.method(console, 'error', (line: string) => printed.push(line));
  try {
    const [name, ...args] = argv;
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...(await databaseOf({ dataDir })) });
    const code = await runCommand(name!, args, config);
    return { code, output: printed.join('\n') };
  } finally {
    log.mock.restore();
    error.mock.restore();
  }
}

/** Runs a command against a running test server's DATA_DIR. */
export const run = (server: { dataDir: string }, ...argv: string[]) => runIn(server.dataDir, ...argv);
