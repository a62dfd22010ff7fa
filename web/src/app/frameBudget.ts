/**
 * New cards per frame, all grids on the page together: a keystroke that changes the results paints
 * its first cards in the next frame and the rest in the frames after, instead of building and
 * laying out a page of cards before anything shows (decision 0018). The sections render in page
 * order, so the first cards of the answer come first.
 */
export const NEW_CARDS_PER_FRAME = 6;

const budget = { view: '', left: 0, frameRequested: false };

/**
 * How many new cards a grid showing `view` may still add in this frame. A new view (a keystroke,
 * another label) has the whole room at once: what the last view's cards took was painted already,
 * or never will be.
 */
export function newCardsRoom(view: string): number {
  if (budget.view !== view || !budget.frameRequested) {
    budget.view = view;
    budget.left = NEW_CARDS_PER_FRAME;
    if (!budget.frameRequested) {
      budget.frameRequested = true;
      // The room is the next frame's again once this one is painted (in a hidden tab, when shown).
      requestAnimationFrame(() => {
        budget.frameRequested = false;
      });
    }
  }
  return budget.left;
}

/** Takes `count` of this frame's room (after `newCardsRoom`). */
export function spendNewCards(count: number): void {
  budget.left = Math.max(0, budget.left - count);
}
