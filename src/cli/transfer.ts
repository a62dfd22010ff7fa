import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { openFolder } from '../features/transfer/folder.js';
import { IMPORT_LIMITS } from '../features/transfer/service.js';
import { openZip } from '../features/transfer/zip.js';
import { PRIVATE_FILE_MODE } from '../fileModes.js';
import type { ImportSummary } from '../shared/api/transfer.js';
import {
  actorFromOptions,
  type Command,
  fileArgument,
  print,
  UsageError,
  userOptions,
  withServices,
} from './support.js';

function describeImport(summary: ImportSummary): string {
  const lines = [
    `Imported ${summary.imported} notes with ${summary.attachments} attachments (${summary.format}); ${summary.alreadyThere} were already there.`,
  ];
  if (summary.unreadableCount > 0) {
    lines.push(`Skipped as unreadable (${summary.unreadableCount}):`);
    for (const { source, reason } of summary.unreadable) lines.push(`  ${source}: ${reason}`);
    const unlisted = summary.unreadableCount - summary.unreadable.length;
    if (unlisted > 0) lines.push(`  … and ${unlisted} more`);
  }
  return lines.join('\n');
}

/** `export` and `import` for one user (docs/backup.md). */
export const transferCommands: Record<string, Command> = {
  export: {
    usage: 'export (--user <email> | --owner) <file.zip>',
    summary: "Writes a user's own notes as Markdown, attachments and notes.json to a zip",
    options: userOptions,
    positionals: 1,
    async run(config, values, positionals) {
      const target = fileArgument(positionals);
      const partial = `${target}.partial`;
      await withServices(config, async (services, db) => {
        const actor = await actorFromOptions(db, values);
        try {
          await pipeline(
            await services.transfer.exportNotes(actor),
            createWriteStream(partial, { mode: PRIVATE_FILE_MODE }),
          );
          await fs.rename(partial, target);
        } finally {
          await fs.rm(partial, { force: true });
        }
      });
      print(`Export written to ${target}`);
    },
  },
  import: {
    usage: 'import (--user <email> | --owner) <file.zip | folder>',
    summary: 'Imports our export, a Google Keep Takeout zip, or Markdown files (zip or folder) into a user',
    options: userOptions,
    positionals: 1,
    async run(config, values, positionals) {
      const source = fileArgument(positionals);
      const summary = await withServices(config, async (services, db) => {
        const actor = await actorFromOptions(db, values);
        const stat = await fs.stat(source).catch(() => {
          throw new UsageError(`${source} does not exist`);
        });
        const files = stat.isDirectory() ? await openFolder(source) : await openZip(source, IMPORT_LIMITS);
        try {
          return await services.transfer.importFrom(actor, files);
        } finally {
          files.close();
        }
      });
      print(describeImport(summary));
    },
  },
};
