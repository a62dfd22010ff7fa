import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { asAppError } from '../src/db/outage.js';
import { errors } from '../src/errors.js';

/**
 * Which errors src/db/outage.ts takes for a store out of reach (503 `unavailable`), made by the
 * real drivers against real sockets: the process tests (processes-outages.test.ts) cause the
 * restarts and stops; these cover the ways of being unreachable that are hard to cause there.
 */

/** A TCP server that accepts connections and never answers, like a database behind a dead link. */
async function silentServer(): Promise<{ port: number; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => sockets.add(socket)).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const { port, close } = await silentServer();
  close();
  return port;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

function assertOutage(error: unknown, of: 'database' | 'redis') {
  const known = asAppError(error);
  assert.equal(known?.code, 'unavailable', String(error));
  assert.equal(known.message, errors.unavailable(of).message);
  assert.ok(known.headers?.['retry-after']);
}

describe('errors of a store out of reach', () => {
  it('PostgreSQL refusing connections', async () => {
    const client = new pg.Client({ connectionString: `postgres://u@127.0.0.1:${await closedPort()}/db` });
    assertOutage(await rejection(client.connect()), 'database');
  });

  it('PostgreSQL not answering within the pool’s connect timeout', async () => {
    const silent = await silentServer();
    const pool = new pg.Pool({
      connectionString: `postgres://u@127.0.0.1:${silent.port}/db`,
      connectionTimeoutMillis: 200,
    });
    try {
      assertOutage(await rejection(pool.query('SELECT 1')), 'database');
    } finally {
      silent.close();
      await pool.end();
    }
  });

  it('Redis refusing connections, with the server’s client options', async () => {
    const redis = new Redis(`redis://127.0.0.1:${await closedPort()}`, {
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    redis.on('error', () => {});
    try {
      await new Promise((resolve) => redis.once('end', resolve));
      assertOutage(await rejection(redis.eval('return 1', 0)), 'redis');
    } finally {
      redis.disconnect();
    }
  });

  it('Redis not answering within the command timeout', async () => {
    const silent = await silentServer();
    const redis = new Redis(`redis://127.0.0.1:${silent.port}`, {
      enableReadyCheck: false, // ready once connected: the command, not the check, gets no answer
      commandTimeout: 200,
    });
    redis.on('error', () => {});
    try {
      await new Promise((resolve) => redis.once('ready', resolve));
      assertOutage(await rejection(redis.eval('return 1', 0)), 'redis');
    } finally {
      redis.disconnect();
      silent.close();
    }
  });

  it('are told apart from the server’s own faults and the catalogue’s errors', () => {
    assert.equal(asAppError(new Error('boom')), undefined);
    assert.equal(asAppError(new TypeError("Cannot read properties of undefined (reading 'id')")), undefined);
    assert.equal(asAppError('not an error'), undefined);
    // What Node gives a request whose client went away: not the database's fault.
    assert.equal(asAppError(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })), undefined);
    const notFound = errors.noteNotFound();
    assert.equal(asAppError(notFound), notFound);
  });
});
