/**
 * Work for when the browser is idle: a few tasks per idle period, oldest first, so that no
 * frame the person is waiting for (a keystroke's results, a scroll) pays for it.
 */

/**
 * Each task re-renders one card (decision 0018), a millisecond or two, and the renders run
 * together once the idle callback returns: so a period takes as many as its time left has room
 * for, at most four, at least one (so the queue always drains).
 */
const TASK_MS = 2.5;
const MOST_TASKS_PER_PERIOD = 4;

/**
 * While the page scrolls, idle periods are the gaps between its frames: the work waits until
 * it has not scrolled for this long (a card's buttons are built at once on hover or focus).
 */
const SCROLL_QUIET_MS = 150;

const queue = new Set<() => void>();
let scheduled = false;
let lastScroll = Number.NEGATIVE_INFINITY;
addEventListener('scroll', () => (lastScroll = performance.now()), { capture: true, passive: true });

// Safari has no requestIdleCallback: a timeout after the current frame's work stands in.
const requestIdle: (callback: (deadline: { timeRemaining(): number }) => void) => void =
  typeof requestIdleCallback === 'function'
    ? (callback) => requestIdleCallback(callback)
    : (callback) => setTimeout(() => callback({ timeRemaining: () => 10 }), 16);

/** Runs `task` in a later idle period; the function returned cancels it if it has not run. */
export function whenIdle(task: () => void): () => void {
  queue.add(task);
  schedule();
  return () => queue.delete(task);
}

function schedule(): void {
  if (scheduled || queue.size === 0) return;
  scheduled = true;
  requestIdle((deadline) => {
    const sinceScroll = performance.now() - lastScroll;
    if (sinceScroll < SCROLL_QUIET_MS) {
      setTimeout(() => {
        scheduled = false;
        schedule();
      }, SCROLL_QUIET_MS - sinceScroll);
      return;
    }
    scheduled = false;
    const room = Math.floor(deadline.timeRemaining() / TASK_MS);
    const tasks = Math.max(1, Math.min(MOST_TASKS_PER_PERIOD, room));
    let count = 0;
    for (const task of queue) {
      if (count++ === tasks) break;
      queue.delete(task);
      task();
    }
    schedule();
  });
}
