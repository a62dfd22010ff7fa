import { MAX_SYNC_CHANGES } from '../../../src/shared/api/limits.js';
import { RejectedChangesError, type SyncApi } from './api.js';
import { writeTransaction } from './database.js';
import { acknowledge, acknowledgedCopy, changesOf, type OutboxEntry, type OutgoingChange } from './outbox.js';
import type { Recoveries } from './recovery.js';
import { EMPTY, type LocalStore } from './store.js';
import type { SyncResult } from './types.js';

const CONFLICT_COPY = 'This note was also changed elsewhere: the other version was kept as a copy.';
const REJECTED = 'The server refused a change to this note; it stays on this device until you edit the note';

/**
 * Pushing (docs/sync.md "Push"): the outbox in batches of at most MAX_SYNC_CHANGES, each answer
 * applied to the device in one transaction.
 */
export class Pusher {
  constructor(
    private readonly api: SyncApi,
    private readonly store: LocalStore,
    private readonly recoveries: Recoveries,
  ) {}

  /** Pushes the outbox in batches; whether anything was sent. */
  async pushAll(): Promise<boolean> {
    let pushed = false;
    for (;;) {
      const batch = await this.takeBatch();
      if (batch.length === 0) return pushed;
      let results: SyncResult[];
      try {
        results = await this.api.push(batch.map((outgoing) => outgoing.change));
      } catch (error) {
        if (!(error instanceof RejectedChangesError)) throw error;
        await this.reject(batch, error.rejected);
        continue;
      }
      await this.acknowledgeBatch(batch, results);
      pushed = true;
    }
  }

  /**
   * The oldest changes, at most MAX_SYNC_CHANGES, marked inflight in the same transaction:
   * from then on they are resent unchanged until answered, and new edits start a new entry.
   */
  private async takeBatch(): Promise<OutgoingChange[]> {
    const tx = writeTransaction(this.store.db);
    const outbox = tx.objectStore('outbox');
    const batch: OutgoingChange[] = [];
    for (const entry of await outbox.getAll()) {
      if (entry.rejected) continue;
      const changes = changesOf(entry);
      if (batch.length + changes.length > MAX_SYNC_CHANGES) break;
      const sent = entry.inflight ? entry : { ...entry, inflight: true };
      if (sent !== entry) await outbox.put(sent);
      for (const change of changes) batch.push({ entry: sent, change });
    }
    await tx.done;
    return batch;
  }

  /**
   * A batch refused whole (D-SYNC-4) because of the changes `rejected` names: their entries are
   * set aside (kept, shown, not sent) and the person told; the rest goes again in the next batch.
   */
  private async reject(batch: OutgoingChange[], rejected: Map<number, string>) {
    const entries = new Map([...rejected].map(([index, reason]) => [batch[index]?.entry.seq, reason]));
    await this.store.write(
      batch.map(({ entry }) => entry.noteId),
      async (_tx, states, notices) => {
        for (const [id, state] of states) {
          if (!state.entries.some((entry) => entries.has(entry.seq))) continue;
          const marked = setAside(state.entries, entries);
          states.set(id, { ...state, entries: marked });
          const reason = marked.find((entry) => entry.rejected)?.rejected;
          notices.push({ kind: 'rejected', noteId: id, message: `${REJECTED}: ${reason}` });
        }
      },
    );
  }

  /** Applies the push answer: one result per change, in order (docs/sync.md "The answer"). */
  private async acknowledgeBatch(batch: OutgoingChange[], results: SyncResult[]) {
    const sent = new Set(batch.map(({ entry }) => entry.seq));
    await this.store.write(
      batch.map(({ entry }) => entry.noteId),
      async (_tx, states, notices) => {
        const gone = new Set<string>();
        /** Notes created by this batch → the version the server gave their last change. */
        const created = new Map<string, number>();
        for (const [index, { change }] of batch.entries()) {
          const result = results[index];
          if (!result || gone.has(change.noteId)) continue;
          if (result.status === 'applied' && result.version !== undefined) {
            if (change.operation === 'create' || created.has(change.noteId))
              created.set(change.noteId, result.version);
          }
          if (result.conflictCopyId && !notices.some((notice) => notice.noteId === result.conflictCopyId))
            notices.push({
              kind: 'conflictCopy',
              noteId: result.conflictCopyId,
              message: CONFLICT_COPY,
            });
          if (result.status === 'skipped' && (result.reason === 'deleted' || result.reason === 'forbidden')) {
            gone.add(change.noteId);
            this.recoveries.forget(change.noteId, states, notices);
            continue;
          }
          let state = acknowledge(states.get(change.noteId)!, change, result);
          if (change.operation === 'delete' && result.status === 'applied') state = EMPTY;
          states.set(change.noteId, state);
        }
        for (const [id, state] of states) {
          const entries = state.entries.filter((entry) => !sent.has(entry.seq));
          const version = created.get(id);
          if (!state.server && version !== undefined) {
            const acknowledged = state.entries.filter((entry) => sent.has(entry.seq));
            const server = acknowledgedCopy(acknowledged, this.store.ownerId, version);
            states.set(id, { ...state, entries, ...(server && { server }) });
          } else if (entries.length !== state.entries.length) states.set(id, { ...state, entries });
        }
      },
    );
  }
}

/**
 * Marks the refused entries (`reasons` by seq). A pending entry after a refused one is folded into
 * it (its newer fields on top): one pending entry per note, and nothing typed is dropped. A
 * delete replaces it.
 */
function setAside(entries: OutboxEntry[], reasons: Map<number | undefined, string>): OutboxEntry[] {
  const marked: OutboxEntry[] = [];
  for (const entry of entries) {
    const reason = reasons.get(entry.seq);
    const last = marked.at(-1);
    if (reason !== undefined) marked.push({ ...entry, inflight: false, rejected: reason });
    else if (last?.rejected && !entry.inflight && entry.operation !== 'delete')
      marked[marked.length - 1] = {
        ...entry,
        operation: last.operation,
        data: { ...last.data, ...entry.data },
        bases: { ...last.bases, ...entry.bases },
        mergedAt: { ...last.mergedAt, ...entry.mergedAt },
        rejected: last.rejected,
      };
    else if (last?.rejected && entry.operation === 'delete') marked[marked.length - 1] = entry;
    else marked.push(entry);
  }
  return marked;
}
