import type SQLite from 'better-sqlite3';
import { keysOf } from '../attachments/service.js';

/**
 * SQL of backups, on raw better-sqlite3 handles: a backup works on database files (the live one
 * and its snapshot), not through the application's Kysely connection.
 */

/** Writes a consistent copy of the database to `target` (one read transaction; writers go on). */
export function snapshotInto(sqlite: SQLite.Database, target: string): void {
  sqlite.prepare('VACUUM INTO ?').run(target);
}

/** Row counts of every table, by name: what a restore checks it got. */
export function tableCounts(sqlite: SQLite.Database): Record<string, number> {
  const tables = sqlite
    .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .pluck()
    .all() as string[];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    counts[table] = sqlite
      .prepare(`SELECT count(*) FROM "${table.replaceAll('"', '""')}"`)
      .pluck()
      .get() as number;
  }
  return counts;
}

/** The storage keys (`files/<id>`, `thumbnails/<id>.webp`) that the attachment rows reference. */
export function attachmentKeys(sqlite: SQLite.Database): string[] {
  const rows = sqlite.prepare('SELECT id, thumbnail_path FROM attachments ORDER BY id').all() as {
    id: string;
    thumbnail_path: string | null;
  }[];
  return rows.flatMap(keysOf);
}

export function integrityProblems(sqlite: SQLite.Database): string[] {
  const results = sqlite.pragma('integrity_check', { simple: false }) as { integrity_check: string }[];
  return results.map((r) => r.integrity_check).filter((line) => line !== 'ok');
}
