/**
 * Drag and drop by pointer (touch, pen and mouse) through @dnd-kit/dom (decision 0040): the
 * browser's native drag and drop does not start from a touch in Chromium's emulation, and on a
 * phone it would fight the long press that selects a card; one library serves every pointer.
 */
import { ActivationConstraint } from '@dnd-kit/abstract';
import {
  AutoScroller,
  DragDropManager,
  type DragEndEvent,
  Draggable,
  Droppable,
  PointerActivationConstraints,
  PointerSensor,
} from '@dnd-kit/dom';
import { DOMRectangle } from '@dnd-kit/dom/utilities';
import { watchLongPress } from './longPress.js';

type DropEdge = 'before' | 'after';

/** What a drop means: the dragged entity's id, the one it was dropped on, and on which side. */
interface Drop {
  source: string;
  target: string;
  edge: DropEdge;
}

/** A drop onto another entity, with its side: after it when moving down, before it moving up. */
function dropOf(event: DragEndEvent): Drop | null {
  const { source, target } = event.operation;
  if (event.canceled || !source || !target || source.id === target.id) return null;
  const to = target.element?.getBoundingClientRect();
  const movingDown = to ? event.operation.position.initial.y < to.top + to.height / 2 : false;
  return { source: String(source.id), target: String(target.id), edge: movingDown ? 'after' : 'before' };
}

/**
 * A touch picks a card up on the long press that selects it, judged the same way (the library's
 * Delay constraint is a timer alone: on a busy page a move made after the press was due, seen
 * before the late timer ran, made a long press a swipe).
 */
class LongPress extends ActivationConstraint<PointerEvent> {
  readonly #watch = watchLongPress((down) => this.activate(down));
  constructor() {
    super({});
  }
  onEvent(event: PointerEvent): void {
    if (event.type === 'pointerdown') this.#watch.down(event);
    else if (event.type === 'pointermove') this.#watch.move(event);
  }
  abort(): void {
    this.#watch.stop();
  }
}

/**
 * A manager of its own: the mouse picks up after 5 px of movement (so a click stays a click), a
 * touch after a long press, except on a handle, which picks up as soon as it moves.
 */
export function createDragManager({
  vertical = false,
}: {
  /** Moves only up and down (a list's items, as in Keep). */
  vertical?: boolean;
} = {}): DragDropManager {
  const manager = new DragDropManager({
    // The library's feedback, cursor and selection plugins inject <style> elements, which the
    // app's Content Security Policy refuses (style-src 'self'): the dragged element follows the
    // pointer through followPointer instead, styled by app.css's `.dragging`.
    plugins: [AutoScroller],
    sensors: [
      PointerSensor.configure({
        // A tap on a card's checkbox or button is theirs, not a drag's.
        preventActivation: (event, source) =>
          !source.handle && (event.target as Element).closest('input, button, textarea, a') !== null,
        activationConstraints: (event, source) =>
          source.handle
            ? [new PointerActivationConstraints.Distance({ value: 4 })]
            : event.pointerType === 'mouse'
              ? [new PointerActivationConstraints.Distance({ value: 5 })]
              : [new LongPress()],
      }),
    ],
  });
  followPointer(manager, vertical);
  markDropTarget(manager);
  return manager;
}

/** The dragged element moves with the pointer (a CSSOM transform, which the CSP allows). */
function followPointer(manager: DragDropManager, vertical: boolean): void {
  const { monitor } = manager;
  monitor.addEventListener('dragstart', ({ operation }) => {
    const element = operation.source?.element;
    if (!element) return;
    element.classList.add('dragging');
    manager.dragOperation.shape = new DOMRectangle(element);
    document.documentElement.classList.add('drag-in-progress');
    // The mouse may have begun selecting text in its first 5 px (the library's selection plugin
    // would inject a <style>); app.css's `.drag-in-progress` keeps the rest from being selected.
    document.getSelection()?.removeAllRanges();
  });
  // The operation's position is updated after this event: `to` is where the pointer is now.
  monitor.addEventListener('dragmove', ({ operation, to }) => {
    const element = operation.source?.element as HTMLElement | undefined;
    if (!element || !to) return;
    const { initial } = operation.position;
    element.style.translate = `${vertical ? 0 : to.x - initial.x}px ${to.y - initial.y}px`;
    // Drop targets are found only while the operation has a shape (the feedback plugin's job).
    manager.dragOperation.shape = new DOMRectangle(element);
  });
  monitor.addEventListener('dragend', ({ operation }) => {
    const element = operation.source?.element as HTMLElement | undefined;
    element?.classList.remove('dragging');
    if (element) element.style.translate = '';
    document.documentElement.classList.remove('drag-in-progress');
  });
}

/** The entity under the dragged one has the class `drop-over` (app.css outlines a card's). */
function markDropTarget(manager: DragDropManager): void {
  let over: Element | undefined;
  const mark = (element: Element | undefined) => {
    over?.classList.remove('drop-over');
    element?.classList.add('drop-over');
    over = element;
  };
  manager.monitor.addEventListener('dragover', ({ operation }) => mark(operation.target?.element));
  manager.monitor.addEventListener('dragend', () => mark(undefined));
}

/** Calls `onDrop` for each drop the manager's drags end in. */
export function onDrop(manager: DragDropManager, handle: (drop: Drop) => void): () => void {
  return manager.monitor.addEventListener('dragend', (event) => {
    const drop = dropOf(event);
    if (drop) handle(drop);
  });
}

/** Tells `handle` the id of what the manager's drag picks up, and null once it is dropped. */
export function onDragging(manager: DragDropManager, handle: (id: string | null) => void): () => void {
  const { monitor } = manager;
  const stopStart = monitor.addEventListener('dragstart', ({ operation }) =>
    handle(operation.source ? String(operation.source.id) : null),
  );
  const stopEnd = monitor.addEventListener('dragend', () => handle(null));
  return () => {
    stopStart();
    stopEnd();
  };
}

/**
 * Makes `element` draggable (by `handle` when given) and a drop target for entities of the same
 * `type`, under `id`. Returns the undo.
 */
export function sortable(
  manager: DragDropManager,
  { id, element, handle, type }: { id: string; element: Element; handle?: Element; type: string },
): () => void {
  const draggable = new Draggable({ id, element, handle, type }, manager);
  // Never onto itself: it moves with the pointer, so the pointer is always over it.
  const droppable = new Droppable(
    { id, element, type, accept: (source) => source.type === type && source.id !== id },
    manager,
  );
  return () => {
    draggable.destroy();
    droppable.destroy();
  };
}

let cards: DragDropManager | undefined;

/**
 * The cards' manager, shared by every grid (Pinned and Others: a grid's drop onto another
 * section's card is not its business): a long press picks a card up by touch, 5 px by mouse.
 */
export function cardDrags(): DragDropManager {
  cards ??= createDragManager();
  return cards;
}
