import type { Migration } from 'kysely';
import * as core from './0001_core.js';
import * as sync from './0003_sync.js';

/**
 * Every migration, in order (D-OPS-3). Names are numbered; a new one is appended here and never
 * edited once released. The Migrator runs each inside a transaction at start-up.
 */
export const migrations: Record<string, Migration> = {
  '0001_core': core,
  '0003_sync': sync,
};
