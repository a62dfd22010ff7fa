import { combine } from '@atlaskit/pragmatic-drag-and-drop/combine';
import { draggable, dropTargetForElements } from '@atlaskit/pragmatic-drag-and-drop/element/adapter';
import { Check } from 'lucide-preact';
import { memo } from 'preact/compat';
import { useEffect, useRef } from 'preact/hooks';
import { setPinned, toggleSelected, updateNotes } from '../app/actions.js';
import { editing, focused, selection } from '../app/state.js';
import { setItemChecked } from '../model/checklist.js';
import type { LocalNote } from '../sync/index.js';
import { ConflictBadge } from './Conflicts.js';
import { IconButton } from './IconButton.js';
import { NoteActions, PinButton } from './NoteActions.js';
import { NoteImages } from './NoteImages.js';
import { NoteText, noteName } from './NoteText.js';
import { CardPeople } from './PeopleDialogs.js';

interface Props {
  note: LocalNote;
  selected: boolean;
  isFocused: boolean;
  /** Drag and drop onto another card moves it there (NoteGrid's monitor writes the order). */
  reorderable: boolean;
}

/** One note in the grid: an `article` named by its title (or first line); click opens the editor. */
export const NoteCard = memo(function NoteCard({ note, selected, isFocused, reorderable }: Props) {
  const element = useRef<HTMLElement>(null);
  useEffect(() => {
    const card = element.current;
    if (!reorderable || !card) return;
    const data = { noteId: note.id };
    return combine(
      draggable({ element: card, getInitialData: () => data }),
      dropTargetForElements({
        element: card,
        getData: () => data,
        canDrop: ({ source }) => source.data.noteId !== note.id,
        onDragEnter: () => card.classList.add('drop-over'),
        onDragLeave: () => card.classList.remove('drop-over'),
        onDrop: () => card.classList.remove('drop-over'),
      }),
    );
  }, [reorderable, note.id]);
  const open = (event: Event) => {
    // A tick in the card's list is not a click on the card.
    if ((event.target as HTMLElement).closest('label, input, button')) return;
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
      onFocus={() => (focused.value = note.id)}
      onKeyDown={(event) => {
        if (event.key === 'Enter' && event.target === event.currentTarget) open(event);
      }}
    >
      <div class="card-corner">
        <IconButton
          label={selected ? 'Deselect note' : 'Select note'}
          pressed={selected}
          class="select"
          onClick={() => toggleSelected(note.id)}
        >
          <Check size={14} />
        </IconButton>
        {!note.trashed && (
          <PinButton pinned={note.pinned} onClick={() => void setPinned([note.id], !note.pinned)} />
        )}
      </div>
      <NoteImages note={note} />
      <ConflictBadge note={note} />
      {note.title && <h3 class="card-title">{note.title}</h3>}
      <NoteText
        note={note}
        onToggle={(line, checked) =>
          void updateNotes([note.id], { content: setItemChecked(note.content, line, checked) })
        }
      />
      <CardPeople note={note} />
      {note.pending && <span class="visually-hidden">Not synced yet</span>}
      <div class="card-toolbar">
        <NoteActions notes={[note]} withPin={false} />
      </div>
    </article>
  );
});
