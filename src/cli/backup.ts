import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../config.js';
import { openDatabase } from '../db/connection.js';
import {
  BackupError,
  type BackupManifest,
  createBackup,
  removeBackupLeftovers,
  restoreBackup,
} from '../features/backup/service.js';
import { type Command, fileArgument, print } from './support.js';

function describe(manifest: BackupManifest): string {
  const { counts } = manifest.database;
  return `${counts.users ?? 0} users, ${counts.notes ?? 0} notes, ${counts.attachments ?? 0} attachments (${manifest.files.length} files)`;
}

/**
 * Backups are of a whole SQLite DATA_DIR, attachments inside; PostgreSQL and a separate
 * ATTACHMENTS_DIR have their own tools (docs/deploy.md).
 */
function refusePostgres(config: Config): void {
  if (config.databaseUrl !== null) {
    throw new BackupError(
      'With DATABASE_URL, back up PostgreSQL with pg_dump (attachments included unless ATTACHMENTS_DIR is set; copy that directory too) (docs/deploy.md)',
    );
  }
  if (config.attachmentsDir !== null) {
    throw new BackupError(
      'With ATTACHMENTS_DIR, attachments are outside DATA_DIR: stop the server and copy DATA_DIR and ATTACHMENTS_DIR (docs/deploy.md)',
    );
  }
}

/** A clear refusal before any work when `target` cannot be written where it is meant to go. */
function checkTargetFolder(target: string): void {
  const folder = path.dirname(target);
  if (!fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) {
    throw new BackupError(`The folder ${folder} does not exist: create it (or mount it) first`);
  }
  try {
    fs.accessSync(folder, fs.constants.W_OK);
  } catch {
    throw new BackupError(`The folder ${folder} is not writable by this user`);
  }
}

/** A backup stopped by SIGINT, SIGTERM or SIGHUP: exit code 128 + the signal's number. */
class BackupInterrupted extends BackupError {
  constructor(signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP') {
    super(`Backup interrupted by ${signal}; nothing was left behind`, 128 + os.constants.signals[signal]);
  }
}

/**
 * A backup stopped by a signal (cron's timeout, Ctrl-C, a container stopping) leaves neither
 * its work folder in DATA_DIR nor a partial archive: the signal aborts it, and it removes both
 * before it ends. A second signal ends the process at once, as without these handlers. Returns
 * what removes the handlers once the backup is done.
 */
function abortOnSignals(controller: AbortController): () => void {
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((signal) => {
    const handler = () => controller.abort(new BackupInterrupted(signal));
    process.once(signal, handler);
    return [signal, handler] as const;
  });
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
}

/** `backup <file>` and `restore <file>` (docs/backup.md). */
export const backupCommands: Record<string, Command> = {
  backup: {
    usage: 'backup <file.zip>',
    summary: 'Writes the database and attachments to one archive, also while the server runs',
    options: {},
    positionals: 1,
    async run(config, _values, positionals) {
      refusePostgres(config);
      const target = fileArgument(positionals);
      if (!fs.existsSync(path.join(config.dataDir, 'notes.db'))) {
        throw new BackupError(`There is no database in ${config.dataDir} to back up`);
      }
      checkTargetFolder(target);
      if (removeBackupLeftovers(config.dataDir) > 0) {
        print('Removed what an earlier, killed backup had left in DATA_DIR');
      }
      const database = await openDatabase(config.dataDir, { schema: 'require-current' });
      const controller = new AbortController();
      const stopListening = abortOnSignals(controller);
      try {
        const manifest = await createBackup(database.sqlite, config.dataDir, target, controller.signal);
        print(`Backup written to ${target}: ${describe(manifest)}`);
        if (manifest.missingFiles.length > 0) {
          print(
            `Warning: ${manifest.missingFiles.length} attachment files were already missing on the server`,
          );
        }
      } finally {
        stopListening();
        await database.close();
      }
    },
  },
  restore: {
    usage: 'restore <file.zip>',
    summary: 'Restores a backup into an empty DATA_DIR, checking every file against its manifest',
    options: {},
    positionals: 1,
    async run(config, _values, positionals) {
      refusePostgres(config);
      const manifest = await restoreBackup(fileArgument(positionals), config.dataDir);
      print(`Restored into ${config.dataDir}: ${describe(manifest)}, made ${manifest.createdAt}`);
    },
  },
};
