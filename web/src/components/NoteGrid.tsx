import { monitorForElements } from '@atlaskit/pragmatic-drag-and-drop/element/adapter';
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { moveNote } from '../app/actions.js';
import { takeNewCards, whenNewCardRoom } from '../app/frameBudget.js';
import { withDragAndDrop } from '../app/lazyDragAndDrop.js';
import { focused, layout, selection } from '../app/state.js';
import { columnCount, estimatedLines, masonryColumns } from '../model/masonry.js';
import type { LocalNote } from '../sync/index.js';
import { NoteCard } from './NoteCard.js';

/**
 * Cards rendered at first (about a screenful on a desktop) and added per step as the end of the
 * grid nears: 10,000 cards in the DOM take seconds, and a keystroke that changes the results lays
 * out and diffs every card on the page (decision 0018).
 */
const PAGE = 16;
/**
 * The next page is added while the end of the grid is less than a viewport's height below the
 * viewport, or anywhere above it: a jump past the end (End, a fling, the scrollbar dragged)
 * never sees the end intersect the viewport itself.
 */
const AHEAD = '1000000px 0px 100% 0px';
interface Props {
  notes: LocalNote[];
  /** Which view and search the notes are the answer to: a new one starts again at the first page. */
  view: string;
  reorderable?: boolean;
}

/**
 * Notes as a masonry grid (or one column in list view), rendered a page at a time. A reorderable
 * grid is one section (Pinned or Others) of the whole list: a card dropped on another takes its
 * place, before it when moved up, after it when moved down.
 */
export function NoteGrid({ notes, view, reorderable = false }: Props) {
  const section = useRef(notes);
  section.current = notes;
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
    const stopMouse = monitorForElements({
      onDrop: ({ source, location }) =>
        drop(source.data.noteId, location.current.dropTargets[0]?.data.noteId),
    });
    const stopTouch = withDragAndDrop(({ cardDrags, onDrop }) =>
      onDrop(cardDrags(), ({ source, target }) => drop(source, target)),
    );
    return () => {
      stopMouse();
      stopTouch();
    };
  }, [reorderable]);
  const container = useRef<HTMLDivElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const width = useSignal(1024);
  const page = useRef({ view, size: PAGE });
  /** The cards of the last render: in a new view none count, as a card that changes column is built again. */
  const onScreen = useRef<ReadonlySet<string>>(new Set());
  if (page.current.view !== view) {
    page.current = { view, size: PAGE };
    onScreen.current = new Set();
  }
  const size = page.current.size;
  /** Bumped to render again: the next new cards of the page, or the next page. */
  const renders = useSignal(0);
  renders.value;

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) width.value = entry.contentRect.width;
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const visible = withNewCardsPerFrame(notes.slice(0, size), onScreen.current, view);
  useEffect(() => {
    onScreen.current = new Set(visible.map((note) => note.id));
    if (visible.length === Math.min(size, notes.length)) return;
    // Effects run once this render is painted: the next cards as soon as a frame has room.
    return whenNewCardRoom(view, () => renders.value++);
  });
  const hasMore = visible.length === size && size < notes.length;
  // Observed again for each page: an observer reports at once whether the end is near, so pages
  // follow one another until it is a viewport away (the same element would report no change).
  useEffect(() => {
    const element = sentinel.current;
    if (!hasMore || !element) return;
    const observer = new IntersectionObserver(
      ([entry]) => {
        if (!entry?.isIntersecting || page.current.size !== size) return;
        page.current.size += PAGE;
        renders.value++;
      },
      { rootMargin: AHEAD },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [hasMore, size]);
  const columns = layout.value === 'list' ? 1 : columnCount(width.value);
  const placed = masonryColumns(visible, columns, estimatedLines);
  const selected = selection.value;
  return (
    <div class={`grid ${layout.value}`} ref={container}>
      <div class="columns">
        {placed.map((column, index) => (
          <div class="column" key={index}>
            {column.map((note) => (
              <NoteCard
                key={note.id}
                note={note}
                selected={selected.has(note.id)}
                isFocused={focused.value === note.id}
                reorderable={reorderable}
              />
            ))}
          </div>
        ))}
      </div>
      {/* Scrolling near the end asks for the next page, once this one is all on screen. */}
      {hasMore && <div ref={sentinel} class="sentinel" />}
    </div>
  );
}

/** The first `page` notes up to the first new card (not on screen) this frame has no room for. */
function withNewCardsPerFrame(page: LocalNote[], onScreen: ReadonlySet<string>, view: string): LocalNote[] {
  const isNew = (note: LocalNote) => !onScreen.has(note.id);
  const room = takeNewCards(view, page.filter(isNew).length);
  let added = 0;
  const end = page.findIndex((note) => isNew(note) && added++ === room);
  return end < 0 ? page : page.slice(0, end);
}
