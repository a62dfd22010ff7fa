import { useSignal, useSignalEffect } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { focused, layout, selection } from '../app/state.js';
import { columnCount, estimatedLines, masonryColumns } from '../model/masonry.js';
import type { LocalNote } from '../sync/index.js';
import { NoteCard } from './NoteCard.js';

/** Cards rendered at first and added per scroll step: 10,000 cards in the DOM take seconds. */
const PAGE = 120;

/** Notes as a masonry grid (or one column in list view), rendered a page at a time. */
export function NoteGrid({ notes }: { notes: LocalNote[] }) {
  const container = useRef<HTMLDivElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const width = useSignal(1024);
  const shown = useSignal(PAGE);

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

  const visible = notes.slice(0, shown.value);
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
              />
            ))}
          </div>
        ))}
      </div>
      {visible.length < notes.length && <div ref={sentinel} class="sentinel" />}
    </div>
  );
}
