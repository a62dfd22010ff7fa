/** How long a touch rests on a card to select it, and to pick it up (Android's long press). */
export const LONG_PRESS_MS = 500;
/** A touch that moves further than this before then is a scroll, not a long press. */
export const LONG_PRESS_SLOP_PX = 8;
