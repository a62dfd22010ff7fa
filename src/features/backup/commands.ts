import fs from 'node:fs';
import path from 'node:path';
import { type Command, fileArgument, print } from '../../commandSupport.js';
import type { Config } from '../../config.js';
import { openDatabase } from '../../db/connection.js';
import { BackupError, type BackupManifest, createBackup, restoreBackup } from './service.js';

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
      const database = await openDatabase(config.dataDir, { schema: 'require-current' });
      try {
        const manifest = await createBackup(database.sqlite, config.dataDir, target);
        print(`Backup written to ${target}: ${describe(manifest)}`);
        if (manifest.missingFiles.length > 0) {
          print(
            `Warning: ${manifest.missingFiles.length} attachment files were already missing on the server`,
          );
        }
      } finally {
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
