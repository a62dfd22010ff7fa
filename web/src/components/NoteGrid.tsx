import { useSignal } from '@preact/signals';
import { defaultRangeExtractor, type Range, type VirtualItem } from '@tanstack/virtual-core';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import { moveNote } from '../app/actions.js';
import { takeNewCards, whenNewCardRoom } from '../app/frameBudget.js';
import { withDragAndDrop } from '../app/lazyDragAndDrop.js';
import { focused, layout, selection } from '../app/state.js';
import { columnLeft, estimatedHeight, gridGeometry } from '../model/masonry.js';
import type { LocalNote } from '../sync/index.js';
import { NoteCard } from './NoteCard.js';
import { useWindowVirtualizer, type WindowVirtualizer } from './windowVirtualizer.js';

/**
 * Rows rendered beyond the screen, above and below: Tab and Shift+Tab from a card on the screen's
 * edge reach the next card, and a scroll finds its next row built (decision 0041).
 */
const OVERSCAN_ROWS = 2;

interface Props {
  notes: LocalNote[];
  /** Which view and search the notes are the answer to: a new one is laid out anew. */
  view: string;
  reorderable?: boolean;
}

/**
 * Notes as a masonry grid (or one column in list view), virtual: only the cards near the screen
 * are in the page (decision 0041), in display order, each placed in the shortest column so far.
 * A reorderable grid is one section (Pinned or Others) of the whole list: a card dropped on
 * another takes its place, before it when moved up, after it when moved down.
 */
export function NoteGrid({ notes, view, reorderable = false }: Props) {
  const section = useRef(notes);
  section.current = notes;
  /** The note being dragged: its card stays in the page while the drag scrolls it away. */
  const dragged = useSignal<string | null>(null);
  useEffect(() => {
    if (!reorderable) return;
    const drop = (source: unknown, target: unknown) => {
      const notes = section.current;
      const from = notes.findIndex((note) => note.id === source);
      const to = notes.findIndex((note) => note.id === target);
      // Another section's cards are not this grid's business.
      if (from < 0 || to < 0) return;
      // Its index among the others is the target's own: after it moving down, before it moving up.
      void moveNote(notes, notes[from]!, to);
    };
    return withDragAndDrop(({ cardDrags, onDragging, onDrop }) => {
      const cards = cardDrags();
      const stopDragging = onDragging(cards, (id) => (dragged.value = id));
      const stopDrop = onDrop(cards, ({ source, target }) => drop(source, target));
      return () => {
        stopDragging();
        stopDrop();
      };
    });
  }, [reorderable]);
  const container = useRef<HTMLDivElement>(null);
  const width = useSignal(1024);
  /** The grid's top in the document: the virtual list works in the window's scroll. */
  const top = useSignal(0);
  /** The cards of the last render: in a new view none count, as the layout starts again. */
  const onScreen = useRef<{ view: string; ids: ReadonlySet<string> }>({ view, ids: new Set() });
  if (onScreen.current.view !== view) onScreen.current = { view, ids: new Set() };
  /** Bumped to render again: the next new cards. */
  const renders = useSignal(0);
  renders.value;

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const resized = new ResizeObserver(([entry]) => {
      if (entry) width.value = entry.contentRect.width;
    });
    resized.observe(element);
    // What is above the grid (the composer opening, the Pinned section growing) moves it, and
    // the page's height changes with it. Read there, where layout is done: read after each render
    // it forced a layout per render (a fifth of a scroll's main thread).
    const moved = new ResizeObserver(() => (top.value = topOf(element)));
    moved.observe(document.body);
    return () => {
      resized.disconnect();
      moved.disconnect();
    };
  }, []);

  const geometry = gridGeometry(width.value, layout.value === 'list');
  const keys = useMemo(
    () => ({
      getItemKey: (index: number) => notes[index]!.id,
      estimateSize: (index: number) => estimatedHeight(notes[index]!, geometry.cardWidth),
    }),
    [notes, geometry.cardWidth],
  );
  const rangeExtractor = useKeptCards(notes, dragged.value);
  const virtualizer = useWindowVirtualizer(
    {
      count: notes.length,
      ...keys,
      lanes: geometry.columns,
      gap: geometry.gap,
      overscan: OVERSCAN_ROWS,
      scrollMargin: top.value,
      rangeExtractor,
      // A card keeps the column it was measured in: measured cards never change columns, the
      // ones not yet measured go to the shortest column by what is known.
      laneAssignmentMode: 'measured',
    },
    view,
  );
  useNewCardWidth(virtualizer, geometry.cardWidth);

  const items = withNewCardsPerFrame(virtualizer.getVirtualItems(), notes, onScreen.current.ids, view);
  const wanted = virtualizer.getVirtualItems().length;
  useEffect(() => {
    onScreen.current = { view, ids: new Set(items.map((item) => notes[item.index]!.id)) };
    if (items.length === wanted) return;
    // Effects run once this render is painted: the next cards as soon as a frame has room.
    return whenNewCardRoom(view, () => renders.value++);
  });
  const selected = selection.value;
  return (
    <div class={`grid ${layout.value}`} ref={container} style={{ height: `${virtualizer.getTotalSize()}px` }}>
      {items.map((item) => {
        const note = notes[item.index]!;
        return (
          <div
            key={note.id}
            class="slot"
            data-index={item.index}
            ref={virtualizer.measureElement}
            style={{
              width: `${geometry.cardWidth}px`,
              transform: `translate(${columnLeft(geometry, item.lane)}px, ${item.start - top.value}px)`,
            }}
          >
            <NoteCard
              note={note}
              selected={selected.has(note.id)}
              isFocused={focused.value === note.id}
              reorderable={reorderable}
            />
          </div>
        );
      })}
    </div>
  );
}

function topOf(element: HTMLElement): number {
  return Math.round(element.getBoundingClientRect().top + window.scrollY);
}

/**
 * The cards kept in the page wherever the screen is: the focused note's (so focus never falls to
 * the page when it scrolls away, and j/k, Enter and closing the editor find it) with its
 * neighbours (where focus goes when it leaves the view), and the one being dragged.
 */
function useKeptCards(notes: LocalNote[], dragged: string | null): (range: Range) => number[] {
  const focusedAt = notes.findIndex((note) => note.id === focused.value);
  const draggedAt = dragged === null ? -1 : notes.findIndex((note) => note.id === dragged);
  const around = focusedAt < 0 ? [] : [focusedAt - 1, focusedAt, focusedAt + 1];
  const kept = [...around, draggedAt].filter((index) => index >= 0 && index < notes.length);
  return useMemo(
    () => (range: Range) => {
      const indexes = defaultRangeExtractor(range);
      const extra = kept.filter((index) => !indexes.includes(index));
      return extra.length === 0 ? indexes : [...new Set([...indexes, ...extra])].sort((a, b) => a - b);
    },
    [kept.join(',')],
  );
}

/**
 * Cards of a new width have new heights: what was measured at the old width is forgotten (the
 * cards on screen are measured again as they resize).
 */
function useNewCardWidth(virtualizer: WindowVirtualizer, cardWidth: number): void {
  const last = useRef(cardWidth);
  if (last.current === cardWidth) return;
  last.current = cardWidth;
  virtualizer.measure();
}

/** The items already on screen, and the first new ones this frame has room for (frameBudget.ts). */
function withNewCardsPerFrame(
  items: VirtualItem[],
  notes: LocalNote[],
  onScreen: ReadonlySet<string>,
  view: string,
): VirtualItem[] {
  const isNew = (item: VirtualItem) => !onScreen.has(notes[item.index]!.id);
  const room = takeNewCards(view, items.filter(isNew).length);
  let added = 0;
  return items.filter((item) => !isNew(item) || added++ < room);
}
