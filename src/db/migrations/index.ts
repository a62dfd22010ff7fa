import type { Migration } from 'kysely';
import type { Engine } from '../dialect.js';
import * as core from './0001_core.js';
import * as attachmentHash from './0002_attachment_hash.js';
import * as sync from './0003_sync.js';
import * as shareLinks from './0005_share_links.js';
import * as apiKeys from './0006_api_keys.js';
import * as searchPrefixIndex from './0007_search_prefix_index.js';
import * as storageUsage from './0008_storage_usage.js';
import * as noteRevisions from './0009_note_revisions.js';
import * as attachmentObjects from './0010_attachment_objects.js';
import * as attachmentDimensions from './0011_attachment_dimensions.js';
import * as noteIds from './0012_note_ids.js';
import * as reminders from './0013_reminders.js';
import * as userIdentities from './0014_user_identities.js';
import * as revisionAgeIndex from './0015_revision_age_index.js';
import * as mcpSubscriptions from './0016_mcp_subscriptions.js';
import * as searchContentless from './0017_search_contentless.js';
import * as revisionAgeIndexDropped from './0018_revision_age_index_dropped.js';
import * as searchDeleteMerge from './0019_search_delete_merge.js';
import * as revisionsRowid from './0020_revisions_rowid.js';
import * as postgresSchema from './postgres_schema.js';

/**
 * Every migration, in order (D-OPS-3). Names are numbered; a new one is appended here and never
 * edited once released. The Migrator runs each inside a transaction at start-up.
 */
export const migrations: Record<string, Migration> = {
  '0001_core': core,
  '0002_attachment_hash': attachmentHash,
  '0003_sync': sync,
  '0005_share_links': shareLinks,
  '0006_api_keys': apiKeys,
  '0007_search_prefix_index': searchPrefixIndex,
  '0008_storage_usage': storageUsage,
  '0009_note_revisions': noteRevisions,
  '0010_attachment_objects': attachmentObjects,
  '0011_attachment_dimensions': attachmentDimensions,
  '0012_note_ids': noteIds,
  '0013_reminders': reminders,
  '0014_user_identities': userIdentities,
  '0015_revision_age_index': revisionAgeIndex,
  '0016_mcp_subscriptions': mcpSubscriptions,
  '0017_search_contentless': searchContentless,
  '0018_revision_age_index_dropped': revisionAgeIndexDropped,
  '0019_search_delete_merge': searchDeleteMerge,
  '0020_revisions_rowid': revisionsRowid,
};

/**
 * The migrations of one engine. PostgreSQL support came with 0009 released, so a PostgreSQL
 * database gets the schema of 0001 to 0009 in one step (postgres_schema.ts) under the same
 * names; from 0010 on, each migration is written for both engines.
 */
export function migrationsFor(engine: Engine): Record<string, Migration> {
  if (engine === 'sqlite') return migrations;
  const alreadyInSchema: Migration = { up: async () => {} };
  return Object.fromEntries(
    Object.entries(migrations).map(([name, migration], index) => [
      name,
      index === 0 ? postgresSchema : name < '0010' ? alreadyInSchema : migration,
    ]),
  );
}
