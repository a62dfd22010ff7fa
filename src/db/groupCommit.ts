/**
 * Group commit for SQLite's one connection (docs/decisions/0025-group-commit.md): the writes that
 * arrive within two turns of the event loop (or while a group is committing) run together in one
 * transaction, and each is answered after its COMMIT. What it saves is the per-transaction work
 * of a COMMIT: above all FTS5 flushing its pending terms into a new index segment (~180 µs a note
 * alone, ~35 µs in a group of ten), and the WAL frames of the pages the writes share. No
 * savepoints: FTS5 flushes at each one, which costs back most of the gain; for the statement
 * savepoints SQLite opens by itself, the search documents are written last (beforeCommit.ts).
 * A write that fails is answered as if it had run alone, and costs the others of its group only
 * a second run (commit below); a COMMIT that fails fails every write of the group. A write that arrives alone runs as
 * before, in a transaction of its own. Durability is unchanged: nothing is answered before the
 * COMMIT that holds it.
 *
 * A connection not registered here (PostgreSQL's pool, where transactions run side by side)
 * gets a plain transaction per write.
 */
import type { Transaction } from 'kysely';
import { withCommitWork } from './beforeCommit.js';
import { enableFastPathsIn } from './fastPath.js';
import { committed } from './noteChanges.js';
import type { Database } from './schema.js';
import type { Db } from './types.js';

export type WriteWork<T> = (trx: Transaction<Database>) => Promise<T>;

/**
 * Runs `work` in a write transaction on `db`, as `transaction()` and group commit both open one:
 * its own statements may take the fast paths (fastPath.ts; they see its writes), what its writes
 * leave for the end runs after `work`, before COMMIT (beforeCommit.ts), and what it changed goes
 * to the live hints once committed (noteChanges.ts).
 */
export async function inWriteTransaction<T>(db: Db, work: WriteWork<T>): Promise<T> {
  let used: Transaction<Database> | undefined;
  const value = await db.transaction().execute((trx) => {
    used = trx;
    enableFastPathsIn(trx, db);
    return withCommitWork(trx, () => work(trx));
  });
  if (used) committed(db, used);
  return value;
}

interface Job {
  work: WriteWork<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** At most this many writes share a transaction, so one COMMIT answers a bounded group. */
const MAX_GROUP = 64;

class GroupCommit {
  private waiting: Job[] = [];
  private running = false;

  constructor(private readonly db: Db) {}

  run<T>(work: WriteWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.running) return;
      // better-sqlite3 never yields: a transaction runs within one turn of the event loop, so
      // the group is what reached the server before it starts. Starting two turns later lets the
      // requests read in this turn's I/O and the next join: under load, ~6 writes a COMMIT
      // instead of ~4, and 10-15% less CPU a write (docs/benchmarks.md, "Group commit two turns
      // later"); a write alone waits one more turn, microseconds.
      this.running = true;
      setImmediate(() => setImmediate(() => void this.drain()));
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.commit(this.waiting.splice(0, MAX_GROUP));
    } finally {
      this.running = false;
    }
  }

  /**
   * Runs `group` in one transaction. When a write throws, the transaction is rolled back and the
   * group is run again in three parts: the writes before it (as a group), it alone (its own
   * transaction, whose answer is its caller's), the writes after it (as a group). A write is a
   * function of the database's state, so running it again gives what it would have given.
   */
  private async commit(group: Job[]): Promise<void> {
    if (group.length === 0) return;
    const values: unknown[] = [];
    let failed = -1;
    try {
      await inWriteTransaction(this.db, async (trx) => {
        for (const [index, job] of group.entries()) {
          failed = index;
          values.push(await job.work(trx));
        }
        // What the writes left for the end (beforeCommit.ts) fails the group as its COMMIT would.
        failed = -1;
      });
    } catch (error) {
      if (failed < 0 || group.length === 1) {
        // The COMMIT itself failed (nothing of the group is stored), or a write that ran alone did.
        for (const job of group) job.reject(error);
        return;
      }
      await this.commit(group.slice(0, failed));
      await this.commit(group.slice(failed, failed + 1));
      await this.commit(group.slice(failed + 1));
      return;
    }
    for (const [index, job] of group.entries()) job.resolve(values[index]);
  }
}

const groups = new WeakMap<Db, GroupCommit>();

/** Groups the writes run through `transaction(…, { group: true })` on `db` (connection.ts, SQLite only). */
export function enableGroupCommit(db: Db): void {
  groups.set(db, new GroupCommit(db));
}

/**
 * The group commit of `db`, where `transaction(…, { group: true })` (transaction.ts) runs its
 * writes; none on a connection that was not registered (PostgreSQL's pool), which then runs each
 * write alone.
 */
export function groupCommitOf(db: Db): Pick<GroupCommit, 'run'> | undefined {
  return groups.get(db);
}
