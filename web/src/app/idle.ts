/**
 * Work for when the browser is idle: a few tasks per idle period, oldest first, so that no
 * frame the person is waiting for (a keystroke's results, a scroll) pays for it.
 */

/** Tasks run per idle period: each re-renders one card (decision 0018), a millisecond or two. */
const TASKS_PER_PERIOD = 4;

const queue = new Set<() => void>();
let scheduled = false;

// Safari has no requestIdleCallback: a timeout after the current frame's work stands in.
const requestIdle: (callback: () => void) => void =
  typeof requestIdleCallback === 'function'
    ? (callback) => requestIdleCallback(callback)
    : (callback) => setTimeout(callback, 16);

/** Runs `task` in a later idle period; the function returned cancels it if it has not run. */
export function whenIdle(task: () => void): () => void {
  queue.add(task);
  schedule();
  return () => queue.delete(task);
}

function schedule(): void {
  if (scheduled || queue.size === 0) return;
  scheduled = true;
  requestIdle(() => {
    scheduled = false;
    let count = 0;
    for (const task of queue) {
      if (count++ === TASKS_PER_PERIOD) break;
      queue.delete(task);
      task();
    }
    schedule();
  });
}
