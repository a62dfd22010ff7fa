import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { errors } from '../../errors.js';
import { PRIVATE_FILE_MODE } from '../../fileModes.js';
import { writeHashed } from '../../files.js';

/**
 * Reading zip archives that someone else made (imports, restores) without trusting them. The
 * central directory is read first and checked against the limits before any entry is
 * decompressed; yauzl then refuses an entry whose data is longer or shorter than its declared
 * size (so the declared sizes the limits checked are the real ones), names with `..`, absolute
 * paths and backslashes.
 */
export interface ZipLimits {
  maxEntries: number;
  /** Sum of the declared uncompressed sizes. */
  maxTotalBytes: number;
  /** Uncompressed / compressed size of one entry, checked for entries above 1 MiB. */
  maxRatio: number;
}

const RATIO_CHECK_FROM_BYTES = 1024 * 1024;

/** No limits: for our own backups, which are as large as the instance they came from. */
export const UNLIMITED: ZipLimits = {
  maxEntries: Number.POSITIVE_INFINITY,
  maxTotalBytes: Number.POSITIVE_INFINITY,
  maxRatio: Number.POSITIVE_INFINITY,
};

export interface ZipReader {
  /** Entry names (directories left out), in archive order. */
  readonly names: readonly string[];
  size(name: string): number;
  /** The whole entry in memory: for small text entries only (callers check `size` first). */
  read(name: string): Promise<Buffer>;
  /** The entry as a stream; it fails when its data is not what its entry declared. */
  stream(name: string): Promise<Readable>;
  /** Streams the entry into a new file, returning its sha256 (hex) and size. */
  extract(name: string, target: string, mode?: number): Promise<{ sha256: string; size: number }>;
  close(): void;
}

function unreadable(reason: string) {
  return errors.invalidArchive(`The archive is not a readable zip file: ${reason}`);
}

export async function openZip(file: string, limits: ZipLimits): Promise<ZipReader> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false, strictFileNames: true });
  } catch (err) {
    throw unreadable((err as Error).message);
  }
  const entries = new Map<string, yauzl.Entry>();
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw errors.invalidArchive(`The archive has more than ${limits.maxEntries} entries`);
    }
    let total = 0;
    for (;;) {
      const entry = await nextEntry(zip);
      if (!entry) break;
      if (entry.fileName.endsWith('/')) continue;
      if (entry.isEncrypted()) throw errors.invalidArchive(`${entry.fileName} is encrypted`);
      if (!entry.canDecodeFileData()) {
        throw errors.invalidArchive(`${entry.fileName} uses an unsupported compression method`);
      }
      total += entry.uncompressedSize;
      if (total > limits.maxTotalBytes) {
        throw errors.invalidArchive(`The archive unpacks to more than ${limits.maxTotalBytes} bytes`);
      }
      if (
        entry.uncompressedSize > RATIO_CHECK_FROM_BYTES &&
        entry.uncompressedSize > entry.compressedSize * limits.maxRatio
      ) {
        throw errors.invalidArchive(
          `${entry.fileName} is compressed more than ${limits.maxRatio}:1, which only a zip bomb does`,
        );
      }
      if (entries.has(entry.fileName)) throw errors.invalidArchive(`${entry.fileName} appears twice`);
      entries.set(entry.fileName, entry);
    }
  } catch (err) {
    zip.close();
    if ((err as { code?: string }).code === 'invalid_archive') throw err;
    throw unreadable((err as Error).message);
  }

  async function open(name: string): Promise<Readable> {
    const entry = entries.get(name);
    if (!entry) throw errors.invalidArchive(`${name} is not in the archive`);
    try {
      return await zip.openReadStreamPromise(entry);
    } catch (err) {
      throw unreadable(`${name}: ${(err as Error).message}`);
    }
  }

  return {
    names: [...entries.keys()],
    size: (name) => entries.get(name)?.uncompressedSize ?? 0,
    stream: open,
    async read(name) {
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of await open(name)) chunks.push(chunk as Buffer);
      } catch (err) {
        throw (err as { code?: string }).code === 'invalid_archive'
          ? err
          : unreadable(`${name}: ${(err as Error).message}`);
      }
      return Buffer.concat(chunks);
    },
    async extract(name, target, mode = PRIVATE_FILE_MODE) {
      const source = await open(name);
      try {
        return await writeHashed(source, target, mode);
      } catch (err) {
        if ('syscall' in (err as object)) throw err;
        throw unreadable(`${name}: ${(err as Error).message}`);
      }
    },
    close: () => zip.close(),
  };
}

function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | null> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: yauzl.Entry) => {
      cleanup();
      resolve(entry);
    };
    const onEnd = () => {
      cleanup();
      resolve(null);
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}
