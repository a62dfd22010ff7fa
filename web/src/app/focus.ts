/**
 * Focus never falls to <body> (issue 30 item 11). When the focused element leaves the page — the
 * editor or a dialog closes, a card is archived, trashed, pinned into another section, recoloured
 * — focus goes back to where it came from: the same note's card (found again by its note id), or
 * a neighbouring card when the note left the view, or the element focused before a dialog opened.
 * A focused card that is moved (the virtual grid re-ordering its nodes while it scrolls) is taken
 * out and put back in one step: it stays in the page but the browser drops its focus, so it gets
 * the focus back too, as does a card's focus dropped any other way but by the person. Focus the
 * person moved to <body> themselves (a click on empty space) stays.
 */

interface Spot {
  element: HTMLElement;
  /** The note of the card (or editor) it is in. */
  noteId: string | null;
  /** The cards around it when it took focus: where to go when its note leaves the view. */
  neighbours: string[];
  /** For an element in a dialog: the spot focused before the dialog opened. */
  before: Spot | null;
}

const card = (id: string) => document.querySelector<HTMLElement>(`article[data-note-id="${CSS.escape(id)}"]`);

function spotOf(element: HTMLElement, previous: Spot | null): Spot {
  const noteId = element.closest<HTMLElement>('[data-note-id]')?.dataset.noteId ?? null;
  const neighbours: string[] = [];
  const cardElement = element.closest('article[data-note-id]');
  if (cardElement) {
    const cards = [...document.querySelectorAll<HTMLElement>('article[data-note-id]')];
    const at = cards.indexOf(cardElement as HTMLElement);
    for (const index of [at + 1, at - 1]) {
      const id = cards[index]?.dataset.noteId;
      if (id) neighbours.push(id);
    }
  }
  const dialog = element.closest('dialog');
  // Into a dialog from outside it: remember where to come back to.
  const before =
    dialog && previous && !dialog.contains(previous.element)
      ? previous
      : dialog && previous?.element.closest('dialog') === dialog
        ? previous.before
        : null;
  return { element, noteId, neighbours, before };
}

function targetOf(spot: Spot | null): HTMLElement | null {
  for (let at = spot; at; at = at.before) {
    if (at.element.isConnected) return at.element;
    for (const id of [at.noteId, ...at.neighbours]) {
      const found = id ? card(id) : null;
      if (found) return found;
    }
  }
  return null;
}

export function installFocusKeeper(): () => void {
  let current: Spot | null = null;
  const onFocus = (event: FocusEvent) => {
    const element = event.target;
    if (element instanceof HTMLElement && element !== document.body) current = spotOf(element, current);
  };
  const observer = new MutationObserver((records) => {
    const active = document.activeElement;
    if (!current || (active && active !== document.body)) return;
    const spot = current;
    if (spot.element.isConnected) {
      const moved = records.some((record) =>
        [...record.removedNodes].some((node) => node.contains(spot.element)),
      );
      // Where it already is on the screen: no scroll.
      if (moved) spot.element.focus({ preventScroll: true });
      return;
    }
    targetOf(spot)?.focus();
  });
  // A card's focus that falls to <body> by any other way than the person pointing elsewhere
  // (the browser dropping it while the grid re-renders) comes back before the next key is handled.
  let pointed = false;
  const onPointerDown = () => (pointed = true);
  const onFocusOut = (event: FocusEvent) => {
    const left = event.target;
    const wasPointed = pointed;
    pointed = false;
    if (event.relatedTarget || wasPointed || !(left instanceof HTMLElement) || !left.closest('article'))
      return;
    queueMicrotask(() => {
      if (document.activeElement !== document.body || current?.element !== left) return;
      if (left.isConnected) left.focus({ preventScroll: true });
      else targetOf(current)?.focus();
    });
  };
  document.addEventListener('focusin', onFocus);
  document.addEventListener('focusout', onFocusOut);
  document.addEventListener('pointerdown', onPointerDown, true);
  observer.observe(document.body, { childList: true, subtree: true });
  return () => {
    document.removeEventListener('focusin', onFocus);
    document.removeEventListener('focusout', onFocusOut);
    document.removeEventListener('pointerdown', onPointerDown, true);
    observer.disconnect();
  };
}
