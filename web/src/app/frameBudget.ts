/**
 * New cards per frame, all grids on the page together: a keystroke that changes the results paints
 * its first cards in the next frame and the rest in the frames after, instead of building and
 * laying out a page of cards before anything shows (decision 0018). The sections render in page
 * order, so the first cards of the answer come first.
 */
export const NEW_CARDS_PER_FRAME = 6;

const budget = { view: '', left: 0, frameRequested: false };

/**
 * The new cards a grid showing `view` may still add in this frame. A new view (a keystroke,
 * another label) has the whole room at once: what the last view's cards took was painted already,
 * or never will be.
 */
function roomFor(view: string): number {
  return budget.frameRequested && budget.view === view ? budget.left : NEW_CARDS_PER_FRAME;
}

/** How many of `wanted` new cards a grid showing `view` may add in this frame, taken from its room. */
export function takeNewCards(view: string, wanted: number): number {
  const room = roomFor(view);
  if (!budget.frameRequested) {
    budget.frameRequested = true;
    // The room is the next frame's again once this one is painted (in a hidden tab, when shown).
    requestAnimationFrame(() => {
      budget.frameRequested = false;
    });
  }
  const taken = Math.min(wanted, room);
  budget.view = view;
  budget.left = room - taken;
  return taken;
}

/**
 * Calls `addCards` (a grid rendering its next new cards) as soon as a frame has room for them:
 * at once when this one has, else once the next frame is painted, not in its animation frame
 * callbacks: cards rendered there would be painted in that frame with the ones already taken.
 * That happens when effects run before their render is painted (Preact waits 35 ms for a frame,
 * then runs them anyway). Returns a cancel.
 */
export function whenNewCardRoom(view: string, addCards: () => void): () => void {
  if (roomFor(view) > 0) {
    addCards();
    return () => {};
  }
  let cancelled = false;
  // Not sync/frames.ts's nextFrame: its timeout for hidden tabs would wake a hidden grid to find
  // no room (the room comes back only with a frame) every 250 ms.
  requestAnimationFrame(() =>
    setTimeout(() => {
      if (!cancelled) addCards();
    }),
  );
  return () => {
    cancelled = true;
  };
}
