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

/** Opens `trx`'s list of work for its end: where the transaction is opened. */
export function openCommitWork(trx: Db): void {
  left.set(trx, []);
}

/** Leaves `work` for the end of `trx`; false when `trx` has no such end (run it now instead). */
export function atCommit(trx: Db, work: Work): boolean {
  const works = left.get(trx);
  if (!works) return false;
  works.push(work);
  return true;
}

/** Runs what `trx`'s writes left for its end, in order: the last step of its work before COMMIT. */
export async function runCommitWork(trx: Db): Promise<void> {
  const works = left.get(trx);
  left.delete(trx);
  for (const work of works ?? []) await work();
}
