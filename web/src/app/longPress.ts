/** How long a touch rests on a card to select it, and to pick it up (Android's long press). */
export const LONG_PRESS_MS = 500;
/** A touch that moves further than this before then is a scroll, not a long press. */
const LONG_PRESS_SLOP_PX = 8;

/** Watches one touch at a time: `down` starts it, `move` judges it, `stop` forgets it. */
export interface LongPressWatch {
  down(event: PointerEvent): void;
  move(event: PointerEvent): void;
  stop(): void;
}

/**
 * Calls `onLongPress` with the touch's `pointerdown` once it has rested LONG_PRESS_MS within
 * LONG_PRESS_SLOP_PX. A move past the slop is judged by its own time stamp, not by when the page
 * hears of it: a busy page (a sync's answer being drawn) may hand it over after the timer was due
 * and before the timer has run, and a finger that rested that long was a long press, not a
 * scroll. (The other way round, a swipe's move handed over after the late timer has run, the
 * page cannot tell: browsers give no order between a late timer and input still on its way.)
 */
export function watchLongPress(onLongPress: (down: PointerEvent) => void): LongPressWatch {
  let pressed: PointerEvent | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    pressed = undefined;
    clearTimeout(timer);
  };
  const fire = () => {
    const down = pressed;
    stop();
    if (down) onLongPress(down);
  };
  return {
    down(event) {
      stop();
      pressed = event;
      timer = setTimeout(fire, LONG_PRESS_MS);
    },
    move(event) {
      if (!pressed) return;
      const moved = Math.hypot(event.clientX - pressed.clientX, event.clientY - pressed.clientY);
      if (moved <= LONG_PRESS_SLOP_PX) return;
      if (event.timeStamp - pressed.timeStamp >= LONG_PRESS_MS) fire();
      else stop();
    },
    stop,
  };
}
