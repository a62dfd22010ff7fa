import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the worker moves committed pages from the WAL into the database file. */
const CHECKPOINT_INTERVAL_MS = 1_000;

/**
 * The worker: its own connection to notes.db, checkpointing in the background. PASSIVE never
 * waits for readers or writers, so it never holds up the server's connection.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => db.pragma('wal_checkpoint(PASSIVE)'), workerData.interval);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * Checkpoints `file`'s WAL from a worker thread, so the server's connection can run with
 * `wal_autocheckpoint = 0`. SQLite's automatic checkpoint runs inside the COMMIT that crosses
 * 1,000 pages: after the largest sync push it took ~600 ms of the event loop
 * (docs/decisions/0006-bounded-work-per-request.md). `onFailure` is called if the worker dies,
 * so the caller can turn the automatic checkpoint back on rather than let the WAL grow.
 */
export function startCheckpointer(file: string, onFailure: (err: Error) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { file, driver, interval: CHECKPOINT_INTERVAL_MS },
  });
  worker.unref();
  let stopped = false;
  worker.once('error', (err) => {
    if (!stopped) onFailure(err);
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      stopped = true;
      // Unreferenced, it would not keep the process alive until it has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
