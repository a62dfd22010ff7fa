/**
 * Writes a transaction leaves for its end: each runs once, in the order left, after the
 * transaction's work and before its COMMIT, where the transaction ends (`transaction` in
 * transaction.ts, or a group of them in groupCommit.ts). For SQLite's search index: FTS5 writes
 * its pending terms as a new index segment at every statement savepoint, and SQLite opens one for
 * each statement that may abort (an UPDATE with a trigger, an INSERT with a foreign key), so a
 * document written before such statements costs a segment of its own, and later merges of it.
 * Left for the end, a group's documents share one segment (docs/decisions/0025-group-commit.md).
 * A transaction these helpers did not open (a migration's, a command's) has no end to leave
 * work for: `atCommit` answers false and the caller writes at once.
 */
import type { Db } from './types.js';

type Work = () => Promise<void>;

const left = new WeakMap<Db, Work[]>();

/** Leaves `work` for the end of `trx`; false when `trx` has no such end (run it now instead). */
export function atCommit(trx: Db, work: Work): boolean {
  const works = left.get(trx);
  if (!works) return false;
  works.push(work);
  return true;
}

/**
 * Runs `work` in `trx`, then what its writes left for the end, in order: the whole of the
 * transaction's work before its COMMIT (where the transaction is opened).
 */
export async function withCommitWork<T>(trx: Db, work: () => Promise<T>): Promise<T> {
  const works: Work[] = [];
  left.set(trx, works);
  try {
    const value = await work();
    for (const leftWork of works) await leftWork();
    return value;
  } finally {
    left.delete(trx);
  }
}
