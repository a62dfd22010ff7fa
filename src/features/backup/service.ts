import { createHash } from 'node:crypto';
import fsSync, { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import SQLite from 'better-sqlite3';
import yazl from 'yazl';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../fileModes.js';
import { APP_VERSION } from '../../version.js';
import { openZip, UNLIMITED, type ZipReader } from '../transfer/zip.js';
import { attachmentKeys, integrityProblems, snapshotInto, tableCounts } from './store.js';

/**
 * Online backup and restore of a whole instance (docs/backup.md): the database and the
 * attachment files that its rows reference, in one zip with a manifest of row counts and
 * SHA-256 hashes that restore checks before it says yes.
 */
export const BACKUP_FORMAT = 'keepsake-notes-backup';
const BACKUP_VERSION = 1;
const DATABASE_FILE = 'notes.db';
const MANIFEST_FILE = 'manifest.json';
const ATTACHMENTS_DIR = 'attachments';
/** The storage keys a backup may hold (attachments/storage.ts writes only these). */
const STORAGE_KEY = /^(files\/[A-Za-z0-9-]+|thumbnails\/[A-Za-z0-9-]+\.webp)$/;
/** How often a backup starts again when an attachment was deleted while it was being taken. */
const SNAPSHOT_ATTEMPTS = 3;

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: number;
  createdAt: string;
  appVersion: string;
  database: { path: string; sha256: string; size: number; counts: Record<string, number> };
  files: { path: string; sha256: string; size: number }[];
  /** Keys whose rows are in the database but whose files were already missing on the server. */
  missingFiles: string[];
}

/** A backup or restore that cannot go on; its message is for the person running the command. */
export class BackupError extends Error {
  /** The command's exit code when this ends it. */
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** Hard-links (or, across file systems, copies) `from` to `to`; false when `from` does not exist. */
async function linkOrCopy(from: string, to: string): Promise<boolean> {
  try {
    await fs.link(from, to);
    return true;
  } catch (err) {
    if (isMissing(err)) return false;
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV' && (err as NodeJS.ErrnoException).code !== 'EPERM')
      throw err;
  }
  try {
    await fs.copyFile(from, to);
    return true;
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

/** The keys of the files under an attachments folder. */
async function storedKeys(root: string): Promise<string[]> {
  const keys: string[] = [];
  for (const folder of ['files', 'thumbnails']) {
    const names = await fs.readdir(path.join(root, folder)).catch((err) => {
      if (isMissing(err)) return [] as string[];
      throw err;
    });
    for (const name of names) if (STORAGE_KEY.test(`${folder}/${name}`)) keys.push(`${folder}/${name}`);
  }
  return keys;
}

interface Snapshot {
  database: string;
  counts: Record<string, number>;
  /** Key -> the file holding it in the work folder. */
  files: Map<string, string>;
  missingFiles: string[];
}

/**
 * A database snapshot and the files its rows reference, agreeing with each other. Attachment
 * files never change once stored, an upload stores its files before it commits its row, and a
 * delete commits before it removes the files. So: (1) hard-link every stored file into the work
 * folder, (2) snapshot the database, (3) link the files of rows committed between (1) and (2).
 * A row deleted after (2) keeps its file through the link of (1). Only a file that came after
 * (1) and went before (3) is missing: then start again, as its row would otherwise be restored
 * without it. A file still missing after a few attempts is missing on the server itself (D-ATT-3
 * keeps such rows); the manifest lists it.
 */
async function takeSnapshot(
  live: SQLite.Database,
  dataDir: string,
  work: string,
  signal: AbortSignal | undefined,
): Promise<Snapshot> {
  const attachments = path.join(dataDir, ATTACHMENTS_DIR);
  for (let attempt = 1; ; attempt++) {
    const folder = path.join(work, `attempt-${attempt}`);
    signal?.throwIfAborted();
    await fs.mkdir(path.join(folder, 'files'), { recursive: true, mode: PRIVATE_DIR_MODE });
    await fs.mkdir(path.join(folder, 'thumbnails'), { recursive: true, mode: PRIVATE_DIR_MODE });
    const files = new Map<string, string>();
    for (const key of await storedKeys(attachments)) {
      signal?.throwIfAborted();
      if (await linkOrCopy(path.join(attachments, key), path.join(folder, key)))
        files.set(key, path.join(folder, key));
    }
    signal?.throwIfAborted();
    const database = path.join(folder, DATABASE_FILE);
    snapshotInto(live, database);
    const snapshot = new SQLite(database, { readonly: true });
    let keys: string[];
    let counts: Record<string, number>;
    try {
      keys = attachmentKeys(snapshot);
      counts = tableCounts(snapshot);
    } finally {
      snapshot.close();
    }
    const missingFiles: string[] = [];
    for (const key of keys) {
      if (files.has(key)) continue;
      signal?.throwIfAborted();
      if (await linkOrCopy(path.join(attachments, key), path.join(folder, key)))
        files.set(key, path.join(folder, key));
      else missingFiles.push(key);
    }
    const referenced = new Set(keys);
    for (const key of files.keys()) if (!referenced.has(key)) files.delete(key); // uploaded after (2), or orphans
    if (missingFiles.length === 0 || attempt === SNAPSHOT_ATTEMPTS)
      return { database, counts, files, missingFiles };
    await fs.rm(folder, { recursive: true, force: true });
  }
}

/**
 * Adds `file` to the zip as `name`, hashing it as the zip reads it; resolves with the hash and
 * size once read. The file is opened only when the zip gets to it (one open file at a time).
 */
function addHashed(
  zip: yazl.ZipFile,
  file: string,
  name: string,
  options: { compress: boolean },
): Promise<{ path: string; sha256: string; size: number }> {
  return new Promise((resolve) => {
    zip.addReadStreamLazy(name, options, (callback) => {
      const hash = createHash('sha256');
      let size = 0;
      const hashing = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk);
          size += chunk.length;
          done(null, chunk);
        },
        flush(done) {
          resolve({ path: name, sha256: hash.digest('hex'), size });
          done();
        },
      });
      const source = createReadStream(file);
      source.on('error', (err) => hashing.destroy(err));
      callback(null, source.pipe(hashing));
    });
  });
}

const WORK_DIR_PREFIX = '.backup-';
/** No backup takes a day: a work folder older than that was left by a killed one. */
const LEFTOVER_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * Removes the work folders (database snapshot, file links) that backups killed outright left
 * in DATA_DIR, those older than a day; returns how many.
 */
export function removeBackupLeftovers(dataDir: string, now = Date.now()): number {
  let removed = 0;
  for (const entry of fsSync.readdirSync(dataDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || !entry.name.startsWith(WORK_DIR_PREFIX)) continue;
    const folder = path.join(dataDir, entry.name);
    if (now - fsSync.statSync(folder).mtimeMs > LEFTOVER_AGE_MS) {
      fsSync.rmSync(folder, { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}

/**
 * Writes a backup of DATA_DIR to `target` while the server may be running and writing. The
 * archive is written next to `target` and renamed when complete, so `target` is never a
 * partial backup. `live` is a connection to DATA_DIR's database.
 *
 * Aborting `signal` stops the backup at its next step: it rejects with the signal's reason once
 * its work folder and partial archive are gone. The file operation under way when the signal
 * came finishes first, so that nothing it creates outlives the clean-up.
 */
export async function createBackup(
  live: SQLite.Database,
  dataDir: string,
  target: string,
  signal?: AbortSignal,
): Promise<BackupManifest> {
  const work = await fs.mkdtemp(path.join(dataDir, WORK_DIR_PREFIX));
  const partial = `${target}.partial`;
  try {
    const snapshot = await takeSnapshot(live, dataDir, work, signal);
    const zip = new yazl.ZipFile();
    const written = pipeline(zip.outputStream, createWriteStream(partial, { mode: PRIVATE_FILE_MODE }), {
      signal,
    });
    // Whatever ends the writing early (the zip failing, a full disk, the signal) ends every wait
    // below; once the streams are closed, so that the partial archive is removed after its last write.
    const stopped = new Promise<never>((_, reject) => {
      zip.on('error', reject);
      written.catch(reject);
    });
    stopped.catch(() => {}); // rejections are seen by the waits below

    const database = addHashed(zip, snapshot.database, DATABASE_FILE, { compress: true });
    // Images are compressed already: stored as they are.
    const files = [...snapshot.files].map(([key, file]) =>
      addHashed(zip, file, `${ATTACHMENTS_DIR}/${key}`, { compress: false }),
    );
    const databaseHash = await Promise.race([database, stopped]);
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      createdAt: new Date().toISOString(),
      appVersion: APP_VERSION,
      database: { ...databaseHash, counts: snapshot.counts },
      files: await Promise.race([Promise.all(files), stopped]),
      missingFiles: snapshot.missingFiles,
    };
    zip.addBuffer(Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`), MANIFEST_FILE);
    zip.end();
    await Promise.race([written, stopped]);
    await fs.rename(partial, target);
    return manifest;
  } catch (err) {
    await fs.rm(partial, { force: true });
    throw signal?.aborted ? signal.reason : err;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

function readManifest(value: unknown): BackupManifest {
  const manifest = value as BackupManifest;
  const valid =
    manifest?.format === BACKUP_FORMAT &&
    manifest.version === BACKUP_VERSION &&
    manifest.database?.path === DATABASE_FILE &&
    typeof manifest.database.sha256 === 'string' &&
    typeof manifest.database.counts === 'object' &&
    Array.isArray(manifest.files) &&
    Array.isArray(manifest.missingFiles) &&
    manifest.files.every(
      (f) =>
        typeof f?.path === 'string' &&
        f.path.startsWith(`${ATTACHMENTS_DIR}/`) &&
        STORAGE_KEY.test(f.path.slice(ATTACHMENTS_DIR.length + 1)) &&
        typeof f.sha256 === 'string' &&
        typeof f.size === 'number',
    );
  if (!valid)
    throw new BackupError(`${MANIFEST_FILE} is not a version ${BACKUP_VERSION} ${BACKUP_FORMAT} manifest`);
  return manifest;
}

async function isEmptyDirectory(directory: string): Promise<boolean | null> {
  try {
    return (await fs.readdir(directory)).length === 0;
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}

/** Extracts one entry and checks it is the file the manifest describes. */
async function extractChecked(
  zip: ZipReader,
  entry: { path: string; sha256: string; size: number },
  target: string,
) {
  const got = await zip.extract(entry.path, target, PRIVATE_FILE_MODE);
  if (got.sha256 !== entry.sha256 || got.size !== entry.size) {
    throw new BackupError(`${entry.path} does not match the manifest (damaged archive)`);
  }
}

/** Checks the restored database: intact, the manifest's row counts, a file for every row. */
function checkDatabase(file: string, manifest: BackupManifest): void {
  const restored = new SQLite(file, { readonly: true });
  try {
    const problems = integrityProblems(restored);
    if (problems.length > 0)
      throw new BackupError(`The database is damaged: ${problems.slice(0, 3).join('; ')}`);
    const counts = tableCounts(restored);
    for (const [table, count] of Object.entries(manifest.database.counts)) {
      if (counts[table] !== count) {
        throw new BackupError(
          `The database has ${counts[table] ?? 0} ${table} rows, the manifest says ${count}`,
        );
      }
    }
    const present = new Set([
      ...manifest.files.map((f) => f.path.slice(ATTACHMENTS_DIR.length + 1)),
      ...manifest.missingFiles,
    ]);
    const unmatched = attachmentKeys(restored).filter((key) => !present.has(key));
    if (unmatched.length > 0)
      throw new BackupError(`Attachment files are missing: ${unmatched.slice(0, 3).join(', ')}`);
  } finally {
    restored.close();
  }
}

/**
 * Restores a backup into `dataDir`, which must be empty or not exist yet (a restore never
 * mixes with or overwrites data). Every file is checked against the manifest and the database
 * against its row counts; on any problem everything restored so far is removed again.
 * Directories get mode 0700 and files 0600: only the server's user may read the notes.
 */
export async function restoreBackup(archive: string, dataDir: string): Promise<BackupManifest> {
  const empty = await isEmptyDirectory(dataDir);
  if (empty === false) {
    throw new BackupError(`${dataDir} is not empty: restore only into a new or empty DATA_DIR`);
  }
  const zip = await openZip(archive, UNLIMITED).catch((err: Error) => {
    throw new BackupError(`${archive} is not a readable backup: ${err.message}`);
  });
  let created = false;
  try {
    if (!zip.names.includes(MANIFEST_FILE))
      throw new BackupError(`${archive} has no ${MANIFEST_FILE}: not a backup`);
    let parsed: unknown;
    try {
      parsed = JSON.parse((await zip.read(MANIFEST_FILE)).toString('utf8'));
    } catch (err) {
      throw new BackupError(`${MANIFEST_FILE} is not readable: ${(err as Error).message}`);
    }
    const manifest = readManifest(parsed);
    const expected = new Set([MANIFEST_FILE, DATABASE_FILE, ...manifest.files.map((f) => f.path)]);
    const unexpected = zip.names.filter((name) => !expected.has(name));
    const absent = [...expected].filter((name) => !zip.names.includes(name));
    if (unexpected.length > 0)
      throw new BackupError(`Not in the manifest: ${unexpected.slice(0, 3).join(', ')}`);
    if (absent.length > 0)
      throw new BackupError(`Missing from the archive: ${absent.slice(0, 3).join(', ')}`);

    created = empty === null;
    await fs.mkdir(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await fs.chmod(dataDir, PRIVATE_DIR_MODE);
    for (const folder of [ATTACHMENTS_DIR, `${ATTACHMENTS_DIR}/files`, `${ATTACHMENTS_DIR}/thumbnails`]) {
      await fs.mkdir(path.join(dataDir, folder), { mode: PRIVATE_DIR_MODE });
    }
    await extractChecked(zip, manifest.database, path.join(dataDir, DATABASE_FILE));
    for (const file of manifest.files)
      await extractChecked(zip, file, path.join(dataDir, ...file.path.split('/')));
    checkDatabase(path.join(dataDir, DATABASE_FILE), manifest);
    return manifest;
  } catch (err) {
    if (created) await fs.rm(dataDir, { recursive: true, force: true });
    else await emptyDirectory(dataDir);
    if (err instanceof BackupError) throw err;
    throw new BackupError(`The backup could not be restored: ${(err as Error).message}`);
  } finally {
    zip.close();
  }
}

async function emptyDirectory(directory: string): Promise<void> {
  const names = await fs.readdir(directory).catch(() => [] as string[]);
  for (const name of names) await fs.rm(path.join(directory, name), { recursive: true, force: true });
}
