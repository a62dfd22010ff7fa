import { parseArgs } from 'node:util';
import { openDataDir } from '../app.js';
import type { Config } from '../config.js';
import { randomToken } from '../crypto.js';
import { AppError } from '../errors.js';
import { BackupError } from '../features/backup/service.js';
import { databaseFailure } from '../startFailure.js';
import { backupCommands } from './backup.js';
import { MigrationError, migrateToPostgresCommand } from './migrateToPostgres.js';
import { type Command, print, UsageError, withServices } from './support.js';
import { transferCommands } from './transfer.js';

/**
 * The server's commands besides serving (`node dist/main.js <command>`). Each works on the
 * configured DATA_DIR, also while the server runs (SQLite in WAL mode lets both write). None but
 * `migrate` changes the schema: each refuses a database whose schema is not this version's
 * (exit code 3), so that a newer build's command cannot upgrade it under a running older server
 * (decision 0035).
 */
const commands: Record<string, Command> = {
  'reset-password': {
    usage: 'reset-password (--email <email> | --owner)',
    summary:
      'Gives a locked-out user a new random password, printed once, and ends their sessions (API keys keep working)',
    options: { email: { type: 'string' }, owner: { type: 'boolean' } },
    async run(config, values) {
      const email = values.email as string | undefined;
      if ((email === undefined) === (values.owner !== true))
        throw new UsageError('Give either --email or --owner');
      // A generated password is never in the shell history or the process list.
      const password = randomToken().slice(0, 20);
      const user = await withServices(config, (services) => services.auth.resetPassword(email, password));
      const who = user.email === '' ? `the owner (${user.displayName})` : user.email;
      console.log(`New password for ${who}: ${password}\nSign in with it, then change it in your settings.`);
    },
  },
  migrate: {
    usage: 'migrate',
    summary:
      "Brings the database's schema up to this version, as the server's start does (stop the older server first)",
    options: {},
    async run(config) {
      const { database } = await openDataDir(config, { schema: 'migrate' });
      await database.close();
      const run = database.migrationsRun;
      print(run.length === 0 ? 'The schema is up to date' : `Ran migrations ${run.join(', ')}`);
    },
  },
  ...backupCommands,
  ...transferCommands,
  'migrate-to-postgres': migrateToPostgresCommand,
};

export function commandsHelp(): string {
  const width = Math.max(...Object.values(commands).map((c) => c.usage.length)) + 2;
  return [
    'Commands (default: serve):',
    ...Object.values(commands).map((c) => `  ${c.usage.padEnd(width)}${c.summary}`),
  ].join('\n');
}

/** Runs `argv` (the words after the script) as a command; returns the process exit code. */
export async function runCommand(name: string, args: string[], config: Config): Promise<number> {
  const command = commands[name];
  if (!command) {
    console.error(`Unknown command "${name}".\n\n${commandsHelp()}`);
    return 2;
  }
  if (args.includes('--help')) {
    console.log(`Usage: node dist/main.js ${command.usage}\n\n${command.summary}.`);
    return 0;
  }
  try {
    const { values, positionals } = parseArgs({
      args,
      options: command.options,
      strict: true,
      allowPositionals: true,
    });
    const expected = command.positionals ?? 0;
    if (positionals.length !== expected) {
      throw new UsageError(expected === 0 ? `Unexpected argument "${positionals[0]}"` : 'Give one file name');
    }
    await command.run(config, values, positionals);
    return 0;
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(err as Error).message}\nUsage: node dist/main.js ${command.usage}`);
      return 2;
    }
    if (err instanceof AppError || err instanceof BackupError || err instanceof MigrationError) {
      console.error(err.message);
      return err instanceof BackupError ? err.exitCode : 1;
    }
    const failure = databaseFailure(err);
    if (failure === null) throw err;
    console.error(failure.message);
    return failure.exitCode;
  }
}
