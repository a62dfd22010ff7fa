/**
 * New cards per frame, all grids on the page together: a keystroke that changes the results paints
 * its first cards in the next frame and the rest in the frames after, instead of building and
 * laying out a page of cards before anything shows (decision 0018). The sections render in page
 * order, so the first cards of the answer come first.
 */
export const NEW_CARDS_PER_FRAME = 6;

const budget = { view: '', left: 0, frameRequested: false };

/**
 * How many of `wanted` new cards a grid showing `view` may add in this frame, taken from the
 * frame's room. A new view (a keystroke, another label) has the whole room at once: what the last
 * view's cards took was painted already, or never will be.
 */
export function takeNewCards(view: string, wanted: number): number {
  if (!budget.frameRequested) {
    budget.frameRequested = true;
    budget.view = view;
    budget.left = NEW_CARDS_PER_FRAME;
    // The room is the next frame's again once this one is painted (in a hidden tab, when shown).
    requestAnimationFrame(() => {
      budget.frameRequested = false;
    });
  } else if (budget.view !== view) {
    budget.view = view;
    budget.left = NEW_CARDS_PER_FRAME;
  }
  const taken = Math.min(wanted, budget.left);
  budget.left -= taken;
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
  const hasRoom = !budget.frameRequested || budget.view !== view || budget.left > 0;
  if (hasRoom) {
    addCards();
    return () => {};
  }
  let cancelled = false;
  requestAnimationFrame(() =>
    setTimeout(() => {
      if (!cancelled) addCards();
    }),
  );
  return () => {
    cancelled = true;
  };
}
