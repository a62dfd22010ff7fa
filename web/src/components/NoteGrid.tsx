import { monitorForElements } from '@atlaskit/pragmatic-drag-and-drop/element/adapter';
import { useSignal, useSignalEffect } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { moveNote } from '../app/actions.js';
import { focused, layout, selection } from '../app/state.js';
import { columnCount, estimatedLines, masonryColumns } from '../model/masonry.js';
import type { LocalNote } from '../sync/index.js';
import { NoteCard } from './NoteCard.js';

/** Cards rendered at first and added per scroll step: 10,000 cards in the DOM take seconds. */
const PAGE = 40;
/**
 * New cards (not on screen in the last render) added per frame: a keystroke that changes every
 * result paints its first cards in the next frame and the rest of the page in the frames after,
 * instead of building 40 cards' DOM before anything shows (decision 0018).
 */
const NEW_CARDS_PER_FRAME = 10;

/**
 * Notes as a masonry grid (or one column in list view), rendered a page at a time. A reorderable
 * grid is one section (Pinned or Others) of the whole list: a card dropped on another takes its
 * place, before it when moved up, after it when moved down.
 */
export function NoteGrid({ notes, reorderable = false }: { notes: LocalNote[]; reorderable?: boolean }) {
  const section = useRef(notes);
  section.current = notes;
  useEffect(() => {
    if (!reorderable) return;
    return monitorForElements({
      onDrop: ({ source, location }) => {
        const notes = section.current;
        const target = location.current.dropTargets[0]?.data.noteId;
        const from = notes.findIndex((note) => note.id === source.data.noteId);
        const to = notes.findIndex((note) => note.id === target);
        // Another section's cards are not this grid's business.
        if (from < 0 || to < 0) return;
        // Its index among the others is the target's own: after it moving down, before it moving up.
        void moveNote(notes, notes[from]!, to);
      },
    });
  }, [reorderable]);
  const container = useRef<HTMLDivElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const width = useSignal(1024);
  const shown = useSignal(PAGE);
  const onScreen = useRef<ReadonlySet<string>>(new Set());

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) width.value = entry.contentRect.width;
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  useSignalEffect(() => {
    const element = sentinel.current;
    if (!element) return;
    const observer = new IntersectionObserver(([entry]) => {
      if (entry?.isIntersecting) shown.value += PAGE;
    });
    observer.observe(element);
    return () => observer.disconnect();
  });

  const visible = withNewCardsPerFrame(notes.slice(0, shown.value), onScreen.current);
  const more = useSignal(0);
  more.value;
  useEffect(() => {
    onScreen.current = new Set(visible.map((note) => note.id));
    if (visible.length === Math.min(shown.value, notes.length)) return;
    const frame = requestAnimationFrame(() => more.value++);
    return () => cancelAnimationFrame(frame);
  });
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
      {visible.length === shown.value && visible.length < notes.length && (
        <div ref={sentinel} class="sentinel" />
      )}
    </div>
  );
}

/** The first `page` notes up to the one that would be the NEW_CARDS_PER_FRAME+1-th new card. */
function withNewCardsPerFrame(page: LocalNote[], onScreen: ReadonlySet<string>): LocalNote[] {
  let budget = NEW_CARDS_PER_FRAME;
  const end = page.findIndex((note) => !onScreen.has(note.id) && budget-- === 0);
  return end < 0 ? page : page.slice(0, end);
}
