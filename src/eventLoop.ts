import { setImmediate } from 'node:timers/promises';

/**
 * Work inside a write transaction gives the event loop a turn after this much: one sync push of
 * 1,000 big notes, and then their search documents, are each a second of synchronous SQLite
 * calls here, during which nothing else, not even /api/health, would run
 * (docs/decisions/0006-bounded-work-per-request.md).
 */
export const WRITE_SLICE_MS = 50;

/**
 * For long work on the event loop (a sync push of 1,000 notes): the returned function lets the
 * event loop turn once `sliceMs` have passed since it last did, so health checks, sockets and
 * timers run in between; otherwise it returns at once. See
 * docs/decisions/0006-bounded-work-per-request.md.
 */
export function eventLoopTurns(sliceMs: number): () => Promise<void> {
  let sliceStart = performance.now();
  return async () => {
    if (performance.now() - sliceStart < sliceMs) return;
    await setImmediate();
    sliceStart = performance.now();
  };
}
