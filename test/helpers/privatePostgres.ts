import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../bench/processes.js';

const run = promisify(execFile);

/** The newest installed PostgreSQL server's binaries (Debian's layout), if any. */
function serverBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root) : [];
  const newest = versions
    .filter((version) => fs.existsSync(path.join(root, version, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(a) - Number(b))
    .at(-1);
  return newest === undefined ? undefined : path.join(root, newest, 'bin');
}

const binaries = serverBinaries();
/** PostgreSQL refuses to run as root: as root (CI), the cluster runs as the postgres user. */
const asRoot = process.getuid?.() === 0;

/**
 * Why the tests that stop and restart a PostgreSQL server of their own cannot run here, or false.
 * They need the server's binaries, not TEST_DATABASE_URL: the shared cluster is never stopped.
 */
export const privatePostgresMissing: string | false = !binaries
  ? 'needs the PostgreSQL server binaries in /usr/lib/postgresql/*/bin (.ci/postgres.sh installs them)'
  : false;

/** Runs a PostgreSQL program as the cluster's owner; resolves once it has exited. */
function postgresProgram(name: string, args: string[]) {
  const program = path.join(binaries!, name);
  return asRoot ? run('runuser', ['-u', 'postgres', '--', program, ...args]) : run(program, args);
}

export interface PrivatePostgres {
  /** A superuser's URL (trust authentication, loopback only). */
  url: string;
  /** `pg_ctl restart -m fast`: every connection is ended with 57P01. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`: connections end, new ones are refused until `start`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes its files. */
  destroy(): Promise<void>;
}

/**
 * A throwaway PostgreSQL cluster of the test's own (initdb in a temporary directory, a free port,
 * no fsync), for tests that stop or restart the database: the shared one stays untouched.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  if (privatePostgresMissing) throw new Error(privatePostgresMissing);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'notes-pg-'));
  if (asRoot) await run('chown', ['postgres:', dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  const pgCtl = (...args: string[]) =>
    postgresProgram('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-w', '-t', '30', ...args]);
  await postgresProgram('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--encoding=UTF8',
    '--locale=C.UTF-8',
    '--no-sync',
  ]);
  const settings = {
    port,
    listen_addresses: "'127.0.0.1'",
    unix_socket_directories: `'${dir}'`,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    shared_buffers: "'16MB'",
  };
  const conf = Object.entries(settings).map(([name, value]) => `${name} = ${value}\n`);
  fs.appendFileSync(path.join(data, 'postgresql.conf'), conf.join(''));
  await pgCtl('start');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: async () => void (await pgCtl('restart', '-m', 'fast')),
    stop: async () => void (await pgCtl('stop', '-m', 'fast')),
    start: async () => void (await pgCtl('start')),
    async destroy() {
      await pgCtl('stop', '-m', 'immediate').catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
