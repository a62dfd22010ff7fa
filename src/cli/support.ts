import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { parseArgs } from 'node:util';
import { type Actor, sessionActor } from '../actor.js';
import { buildServices, openDataDir } from '../app.js';
import type { Config } from '../config.js';
import { fastSqlite } from '../db/fastPath.js';
import { OTHER_CONNECTIONS_MS } from '../db/keptReads.js';
import type { Db } from '../db/types.js';
import { errors } from '../errors.js';
import { findOwner, findUserByEmail } from '../model/users.js';

/** What every command (src/cli/commands.ts lists them) is made of, and what they share. */
export interface Command {
  usage: string;
  summary: string;
  options: NonNullable<Parameters<typeof parseArgs>[0]>['options'];
  /** How many words besides the options the command takes (file names); none when absent. */
  positionals?: number;
  run(
    config: Config,
    values: Record<string, string | boolean | undefined>,
    positionals: string[],
  ): Promise<void>;
}

/** Thrown for a command used wrongly: its message and the usage are printed, exit code 2. */
export class UsageError extends Error {}

/** Prints a line to the person running the command; tests capture it. */
export const print = (line: string) => console.log(line);

/** Timers may fire up to a millisecond early on another process's monotonic clock. */
const SLACK_MS = 5;

/** Opens DATA_DIR's database for one command's work and closes it afterwards. */
export async function withServices<T>(
  config: Config,
  work: (services: ReturnType<typeof buildServices>, db: Db) => Promise<T>,
): Promise<T> {
  const { database, quota, clock } = await openDataDir(config);
  try {
    const log = { warn: (details: object, message: string) => console.warn(message, details) };
    const services = buildServices({
      db: database.db,
      pingDatabase: database.ping,
      clock,
      config,
      log,
      quota,
    });
    const result = await work(services, database.db);
    // A running server sees another connection's commit within OTHER_CONNECTIONS_MS (the rows
    // it keeps, decision 0048): the command returns only then, so that once it says a session
    // has ended, the server refuses it (PostgreSQL's servers read every time).
    if (fastSqlite(database.db)) await sleep(OTHER_CONNECTIONS_MS + SLACK_MS);
    return result;
  } finally {
    await database.close();
  }
}

/** The `--user <email> | --owner` options of commands that act as one user. */
export const userOptions = { user: { type: 'string' }, owner: { type: 'boolean' } } as const;

/** The user that `--user <email>` or `--owner` names, acting with every scope. */
export async function actorFromOptions(
  db: Db,
  values: Record<string, string | boolean | undefined>,
): Promise<Actor> {
  const email = values.user as string | undefined;
  if ((email === undefined) === (values.owner !== true))
    throw new UsageError('Give either --user <email> or --owner');
  const user = email === undefined ? await findOwner(db) : await findUserByEmail(db, email);
  if (!user) throw errors.userNotFound();
  return sessionActor(user);
}

/** The one file name a command takes. */
export const fileArgument = (positionals: string[]) => path.resolve(positionals[0]!);
