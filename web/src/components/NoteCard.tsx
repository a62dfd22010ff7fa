import { useSignal } from '@preact/signals';
import { Check } from 'lucide-preact';
import { useEffect, useRef } from 'preact/hooks';
import { setPinned, toggleSelected, updateNotes } from '../app/actions.js';
import { whenIdle } from '../app/idle.js';
import { withDragAndDrop } from '../app/lazyDragAndDrop.js';
import { type LongPressWatch, watchLongPress } from '../app/longPress.js';
import { editing, focused, selection } from '../app/state.js';
import { setItemChecked } from '../model/checklist.js';
import { displayTitle } from '../model/conflicts.js';
import type { LocalNote } from '../sync/index.js';
import { ConflictBadge } from './Conflicts.js';
import { LabelsButton } from './EditLabels.js';
import { IconButton } from './IconButton.js';
import { memo } from './memo.js';
import { NoteActions, PinButton } from './NoteActions.js';
import { NoteImages } from './NoteImages.js';
import { NoteText, noteName } from './NoteText.js';
import { CardPeople } from './PeopleDialogs.js';
import { ReminderChip } from './Reminders.js';

interface Props {
  note: LocalNote;
  selected: boolean;
  isFocused: boolean;
  /** Drag and drop onto another card moves it there (NoteGrid's monitor writes the order). */
  reorderable: boolean;
}

/** A long press by touch (issue 30 item 7: selection by touch, where cards have no buttons). */
function useLongPress(onLongPress: () => void) {
  const state = useRef<{ watch?: LongPressWatch; fired: boolean; onLongPress: () => void }>({
    fired: false,
    onLongPress,
  });
  state.current.onLongPress = onLongPress;
  state.current.watch ??= watchLongPress(() => {
    state.current.fired = true;
    state.current.onLongPress();
  });
  const { watch } = state.current;
  return {
    justFired: () => {
      const fired = state.current.fired;
      state.current.fired = false;
      return fired;
    },
    handlers: {
      onPointerDown: (event: PointerEvent) => {
        if (event.pointerType !== 'touch') return;
        state.current.fired = false;
        watch.down(event);
      },
      onPointerMove: watch.move,
      onPointerUp: watch.stop,
      onPointerCancel: watch.stop,
      // The browser's own long-press menu would cover the selection.
      onContextMenu: (event: Event) => {
        if (state.current.fired) event.preventDefault();
      },
    },
  };
}

/**
 * One note in the grid: an `article` named by its title (or first line); click opens the editor.
 * Its buttons (select, pin, color, archive, delete: more than half of a card's DOM) are built when
 * the browser is idle, or at once when the card is pointed at, focused or selected, so a keystroke
 * that changes the search results builds only the cards' text (decision 0018). A pinned note's
 * pin shows at once: it is the one button seen without pointing.
 */
export const NoteCard = memo(function NoteCard({ note, selected, isFocused, reorderable }: Props) {
  const element = useRef<HTMLElement>(null);
  const controlsBuilt = useSignal(false);
  const buildControls = () => (controlsBuilt.value = true);
  useEffect(() => {
    const card = element.current;
    // Focus on the card or anything in it (Preact has no onFocusIn: 'focusin' is not a DOM property).
    card?.addEventListener('focusin', buildControls);
    const cancel = whenIdle(buildControls);
    return () => {
      card?.removeEventListener('focusin', buildControls);
      cancel();
    };
  }, []);
  const controls = controlsBuilt.value || selected;
  useEffect(() => {
    const card = element.current;
    if (!reorderable || !card) return;
    // By mouse, touch or pen (a touch after a long press): NoteGrid's monitor writes the order.
    return withDragAndDrop(({ cardDrags, sortable }) =>
      sortable(cardDrags(), { id: note.id, element: card, type: 'note' }),
    );
  }, [reorderable, note.id]);
  const longPress = useLongPress(() => toggleSelected(note.id));
  const open = (event: Event) => {
    // A tick in the card's list is not a click on the card, nor the click that ends a long press.
    if ((event.target as HTMLElement).closest('label, input, button') || longPress.justFired()) return;
    if (selection.value.size > 0) toggleSelected(note.id);
    else editing.value = note.id;
  };
  return (
    <article
      ref={element}
      class={`card note-${note.color}${selected ? ' selected' : ''}${isFocused ? ' focused' : ''}`}
      aria-label={noteName(note)}
      data-note-id={note.id}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: cards take focus for j/k and Enter, as in Keep
      tabIndex={0}
      onClick={open}
      {...longPress.handlers}
      onPointerEnter={buildControls}
      onFocus={() => (focused.value = note.id)}
      onKeyDown={(event) => {
        if (event.key === 'Enter' && event.target === event.currentTarget) open(event);
      }}
    >
      <div class="card-corner">
        {controls && (
          <IconButton
            label={selected ? 'Deselect note' : 'Select note'}
            pressed={selected}
            class="select"
            onClick={() => toggleSelected(note.id)}
          >
            <Check size={14} />
          </IconButton>
        )}
        {(controls || note.pinned) && !note.trashed && (
          <PinButton pinned={note.pinned} onClick={() => void setPinned([note.id], !note.pinned)} />
        )}
      </div>
      <NoteImages note={note} />
      <ConflictBadge note={note} />
      {note.title && <h3 class="card-title">{displayTitle(note.title)}</h3>}
      <NoteText
        note={note}
        onToggle={(line, checked) =>
          void updateNotes([note.id], { content: setItemChecked(note.content, line, checked) })
        }
      />
      <ReminderChip note={note} />
      <CardPeople note={note} />
      {note.pending && <span class="visually-hidden">Not synced yet</span>}
      {controls && (
        <div class="card-toolbar">
          <NoteActions notes={[note]} withPin={false} />
          {!note.trashed && <LabelsButton noteId={note.id} />}
        </div>
      )}
    </article>
  );
});
