import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

interface CheckpointerTiming {
  /** How often the worker moves committed pages from the WAL into the database file. */
  intervalMs: number;
  /**
   * How many intervals without a write the worker outlives. A worker thread is ~6–9 MiB of
   * RSS (its V8 isolate and heap) that an idle server does without; starting one again takes
   * ~30 ms of CPU, once per burst of writes (docs/benchmarks.md, "Issue 31: idle memory,
   * time-ordered note ids").
   */
  idleIntervals: number;
}

const TIMING: CheckpointerTiming = { intervalMs: 1_000, idleIntervals: 10 };

/**
 * The worker: its own connection to notes.db, checkpointing in the background. PASSIVE never
 * waits for readers or writers, so it never holds up the server's connection. On 'stop' it
 * checkpoints once more, so what the last interval wrote reaches the database file.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file);
db.pragma('busy_timeout = 5000');
const checkpoint = () => db.pragma('wal_checkpoint(PASSIVE)');
const timer = setInterval(checkpoint, workerData.interval);
parentPort.once('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

interface Checkpointer {
  /** Whether a worker thread is alive (it is only while writes come). */
  readonly running: boolean;
  stop(): Promise<void>;
}

interface Running {
  worker: Worker;
  exited: Promise<void>;
}

/**
 * Checkpoints `file`'s WAL from a worker thread, so the server's connection can run with
 * `wal_autocheckpoint = 0`. SQLite's automatic checkpoint runs inside the COMMIT that crosses
 * 1,000 pages: after the largest sync push it took ~600 ms of the event loop
 * (docs/decisions/0006-bounded-work-per-request.md).
 *
 * The worker runs while there are writes: `rowsChanged` (the connection's `total_changes()`) is
 * read once an interval on the event loop, a write starts the worker, and the worker stops
 * after `idleIntervals` without one. `onFailure` is called if the worker dies, so the caller can
 * turn the automatic checkpoint back on rather than let the WAL grow.
 */
export function startCheckpointer(
  file: string,
  rowsChanged: () => number,
  onFailure: () => void,
  timing: CheckpointerTiming = TIMING,
): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  let current: Running | undefined;
  // -1: what the last run left in the WAL (or the migrations just now) is checkpointed at once.
  let seen = -1;
  let idle = 0;
  // A worker stopped for want of writes may still be closing its connection when the server stops.
  let stopping: Promise<void> = Promise.resolve();
  // A failure is told once (a worker still stopping may fail too; the timer that would start
  // another is cleared), and after stop() not at all.
  let failed = false;
  let stopped = false;

  const start = (): Running => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file, driver, interval: timing.intervalMs },
    });
    worker.unref();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // What a worker throws arrives as a plain object (a SqliteError is not cloned as an Error).
    // A worker stopped for want of writes before its failure arrived (one that could not open
    // the database, on a machine slow to start threads) is a failure too: the next would fail
    // the same way, and the WAL would grow meanwhile.
    worker.once('error', () => {
      if (failed || stopped) return;
      failed = true;
      if (current?.worker === worker) current = undefined;
      clearInterval(timer);
      onFailure();
    });
    return { worker, exited };
  };

  const finish = async (running: Running) => {
    // Unreferenced, it would not keep the process alive until it has closed its connection.
    running.worker.ref();
    running.worker.postMessage('stop');
    await running.exited;
  };

  const tick = () => {
    const changed = rowsChanged();
    if (changed !== seen) {
      seen = changed;
      idle = 0;
      current ??= start();
    } else if (current && ++idle >= timing.idleIntervals) {
      const running = current;
      current = undefined;
      stopping = finish(running);
    }
  };
  const timer = setInterval(tick, timing.intervalMs);
  timer.unref();
  tick();

  return {
    get running() {
      return current !== undefined;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      const running = current;
      current = undefined;
      if (running) await finish(running);
      await stopping;
    },
  };
}
