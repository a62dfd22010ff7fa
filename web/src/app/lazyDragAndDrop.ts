/**
 * dragAndDrop.ts and @dnd-kit/dom (about 30 KB gzipped) load after the first screen, in a chunk
 * of their own: nothing can be dragged before a card or a list is painted anyway.
 */
type DragAndDrop = Pick<
  typeof import('./dragAndDrop.js'),
  'cardDrags' | 'createDragManager' | 'onDragging' | 'onDrop' | 'sortable'
>;

/** Runs `use` once the module has loaded, unless undone first; returns the undo of both. */
export function withDragAndDrop(use: (module: DragAndDrop) => () => void): () => void {
  let undo: (() => void) | undefined;
  let cancelled = false;
  void import('./dragAndDrop.js').then(({ cardDrags, createDragManager, onDragging, onDrop, sortable }) => {
    if (!cancelled) undo = use({ cardDrags, createDragManager, onDragging, onDrop, sortable });
  });
  return () => {
    cancelled = true;
    undo?.();
  };
}
