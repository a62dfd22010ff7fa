import fs from 'node:fs';
import { after, before } from 'node:test';
import { type Actor, sessionActor } from '../../src/actor.js';
import { buildServices, openDataDir, type Services } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/types.js';
import { AppError } from '../../src/errors.js';
import type { Note, NoteInput } from '../../src/shared/api/notes.js';
import type { SyncChange, SyncResult } from '../../src/shared/api/sync.js';
import { OWNER_PASSWORD } from './client.js';
import { TEST_PASSWORD_COST } from './passwordCost.js';
import { databaseUrlFor, dropDatabaseOf, onPostgres } from './postgres.js';
import { tempDataDir } from './server.js';
import type { Change } from './sync.js';

/**
 * The service tier of the tests (decision 0032): the services `buildApp` builds, on a fresh
 * DATA_DIR (and, with TEST_DATABASE_URL, a fresh PostgreSQL database), without Fastify or HTTP.
 * Rule tests call `services.sync.push(actor, …)` as the routes do; the HTTP tests keep what only
 * HTTP has (status codes, headers, streaming, authentication).
 */
export interface TestServices {
  services: Services;
  db: Db;
  dataDir: string;
  close(): Promise<void>;
}

/** A user of a TestServices instance: who the services see (`actor`) and their id. */
export interface ServiceUser {
  actor: Actor;
  userId: number;
}

export async function startServices(options: { clock?: Clock; env?: Record<string, string> } = {}) {
  const dataDir = tempDataDir();
  const database = onPostgres ? { DATABASE_URL: await databaseUrlFor(dataDir) } : {};
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...database, ...options.env });
  // A fresh database, migrated as the server's start does (commands require it current, decision 0035).
  const opened = await openDataDir(config, { schema: 'migrate' });
  const services = buildServices({
    db: opened.database.db,
    pingDatabase: opened.database.ping,
    clock: options.clock ?? opened.clock,
    config,
    log: { warn() {} },
    passwordCost: TEST_PASSWORD_COST,
    quota: opened.quota,
  });
  let closed = false;
  return {
    services,
    db: opened.database.db,
    dataDir,
    async close() {
      if (closed) return;
      closed = true;
      await opened.database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (onPostgres) await dropDatabaseOf(dataDir);
    },
  } satisfies TestServices;
}

/** The instance's owner, set up as POST /api/auth/setup does. */
async function setUpOwner(services: Services): Promise<ServiceUser> {
  const session = await services.auth.setup({ password: OWNER_PASSWORD });
  const resolved = await services.auth.resolveSession(session.token);
  if (!resolved) throw new Error('the new owner session does not resolve');
  return { actor: resolved.actor, userId: resolved.actor.userId };
}

/**
 * Services for the tests of the file or describe block it is called in, made in `before` with
 * the owner set up, closed in `after`; read them from tests and later hooks. The returned
 * functions are the service-level forms of test/helpers/sync.ts's HTTP helpers.
 */
export function useServices(options: { clock?: Clock } = {}) {
  let made: (TestServices & { owner: ServiceUser }) | undefined;
  before(async () => {
    const started = await startServices(options);
    made = { ...started, owner: await setUpOwner(started.services) };
  });
  after(() => made?.close());
  const current = () => {
    if (!made) throw new Error('useServices(): made in before(); read it from tests and hooks');
    return made;
  };
  const services = () => current().services;
  return {
    get services() {
      return services();
    },
    get db() {
      return current().db;
    },
    /** The instance's owner. */
    get owner() {
      return current().owner;
    },
    /** A new user made by the owner, as POST /api/users does. */
    async addUser(email: string): Promise<ServiceUser> {
      const created = await services().users.create(current().owner.actor, {
        email,
        displayName: email.split('@')[0]!,
        password: 'another secret',
      });
      return { actor: sessionActor({ id: created.id, is_owner: 0 }), userId: created.id };
    },
    /** A sync push (D-SYNC-4): the results, in the order of the changes. */
    push(user: ServiceUser, changes: Change[]): Promise<SyncResult[]> {
      return services().sync.push(user.actor, changes as SyncChange[]);
    },
    /** Everything the user pulls from 0. */
    async pullAll(user: ServiceUser): Promise<Note[]> {
      return (await services().sync.pull(user.actor, 0)).notes;
    },
    /** What the user pulls from /api/sync/deleted since `since`. */
    async deletedSince(user: ServiceUser, since: number) {
      return (await services().sync.deleted(user.actor, since)).deleted;
    },
    createNote(user: ServiceUser, input: NoteInput): Promise<Note> {
      return services().notes.create(user.actor, input);
    },
    /** The note as the user reads it, or undefined when they cannot see it (note_not_found). */
    async noteOf(user: ServiceUser, noteId: string): Promise<Note | undefined> {
      try {
        return await services().notes.get(user.actor, noteId);
      } catch (error) {
        if (error instanceof AppError && error.code === 'note_not_found') return undefined;
        throw error;
      }
    },
    /** The note as the user reads it; fails the test when they cannot see it. */
    async readNote(user: ServiceUser, noteId: string): Promise<Note> {
      return services().notes.get(user.actor, noteId);
    },
    /** The owner shares a note with `userId`. */
    async share(owner: ServiceUser, noteId: string, userId: number): Promise<void> {
      await services().collaborators.add(owner.actor, noteId, userId);
    },
  };
}
