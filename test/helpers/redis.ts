import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../../bench/processes.js';

/**
 * Redis for the tests of the rate limits in it (REDIS_URL): with TEST_REDIS_URL set (`.ci/redis.sh`
 * prints one), those tests run; without it they skip, like the PostgreSQL ones.
 */
export const testRedisUrl = process.env.TEST_REDIS_URL || undefined;

/** The redis-server program, if installed. */
const redisServer =
  spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim() || undefined;

/** Why the tests that stop a Redis server of their own cannot run here, or false. */
export const privateRedisMissing: string | false =
  !redisServer && 'needs redis-server on the PATH (.ci/redis.sh installs it)';

export interface PrivateRedis {
  url: string;
  /** Stops the server (SIGTERM); clients' connections end and new ones are refused. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
}

/**
 * A redis-server of the test's own on a free loopback port, without persistence, for tests that
 * stop it: the shared one stays untouched. The test stops it with `stop`.
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  if (privateRedisMissing) throw new Error(privateRedisMissing);
  const port = await freePort();
  let server: ChildProcess | undefined;
  const start = async () => {
    const options = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    const child = spawn(redisServer!, options, { stdio: ['ignore', 'pipe', 'inherit'] });
    server = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk;
        if (!output.includes('Ready to accept connections')) return;
        // Its later output is not needed, but must keep flowing.
        child.stdout!.off('data', read).resume();
        resolve();
      };
      child.stdout!.on('data', read);
      child.once('exit', () => reject(new Error(`redis-server exited: ${output}`)));
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      const child = server;
      server = undefined;
      if (!child || child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
    start,
  };
}
