import { groupCommitOf, inWriteTransaction, type WriteWork } from './groupCommit.js';
import type { Db } from './types.js';

/**
 * The one way a service runs a write transaction: `work` runs in a transaction (using only its
 * `trx`), the promise settles once it has committed, and what it changed goes to the live hints
 * after that COMMIT (noteChanges.ts, decision 0033).
 *
 * `group: true` lets it share a COMMIT with the writes that arrive meanwhile on SQLite
 * (groupCommit.ts, decision 0025): for frequent small writes whose COMMIT, with its FTS5 flush,
 * is most of their cost. `work` may then run twice (a failing write of its group makes the
 * others run again), so it must be a function of the database's state alone. `group: false`
 * runs it in a transaction of its own; the call site says why it does not join a group.
 * On PostgreSQL every write has its own transaction either way.
 */
export function transaction<T>(db: Db, work: WriteWork<T>, { group }: { group: boolean }): Promise<T> {
  const commits = group ? groupCommitOf(db) : undefined;
  return commits ? commits.run(work) : inWriteTransaction(db, work);
}
