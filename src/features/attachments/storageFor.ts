import path from 'node:path';
import type { Config } from '../../config.js';
import type { Db } from '../../db/types.js';
import { DatabaseStorage } from './databaseStorage.js';
import { type AttachmentStorage, DirectoryStorage } from './storage.js';

/**
 * The store a configuration selects (docs/attachments.md): ATTACHMENTS_DIR when set, else the
 * database on PostgreSQL, else DATA_DIR/attachments next to SQLite's database.
 */
export function attachmentStorageFor(
  config: Pick<Config, 'dataDir' | 'databaseUrl' | 'attachmentsDir'>,
  db: Db,
): AttachmentStorage {
  if (config.attachmentsDir !== null) return new DirectoryStorage(config.attachmentsDir);
  if (config.databaseUrl !== null) return new DatabaseStorage(db);
  return new DirectoryStorage(path.join(config.dataDir, 'attachments'));
}
