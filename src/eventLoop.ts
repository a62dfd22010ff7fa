import { setImmediate } from 'node:timers/promises';

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
