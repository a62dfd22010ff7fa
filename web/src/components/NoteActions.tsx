import { Archive, ArchiveRestore, Pin, PinOff, RotateCcw, SquareCheck, Trash, Trash2 } from 'lucide-preact';
import { deleteForever, moveToTrash, restore, setArchived, setPinned, updateNotes } from '../app/actions.js';
import type { LocalNote } from '../sync/index.js';
import { ColorPicker } from './ColorPicker.js';
import { IconButton } from './IconButton.js';
import { RemindButton } from './Reminders.js';

/** Pin, color, archive and trash for one note or a selection (`notes`), as the view allows. */
export function NoteActions({ notes, withPin = true }: { notes: LocalNote[]; withPin?: boolean }) {
  const ids = notes.map((note) => note.id);
  if (notes.length > 0 && notes.every((note) => note.trashed)) {
    return (
      <>
        <IconButton label="Restore" onClick={() => void restore(ids)}>
          <RotateCcw size={18} />
        </IconButton>
        <IconButton label="Delete forever" onClick={() => deleteForever(ids)}>
          <Trash size={18} />
        </IconButton>
      </>
    );
  }
  const allPinned = notes.every((note) => note.pinned);
  const allArchived = notes.every((note) => note.archived);
  const color = notes.every((note) => note.color === notes[0]?.color) ? (notes[0]?.color ?? null) : null;
  return (
    <>
      {withPin && <PinButton pinned={allPinned} onClick={() => void setPinned(ids, !allPinned)} />}
      {notes.length === 1 && <RemindButton note={notes[0]!} />}
      <ColorPicker value={color} onPick={(picked) => void updateNotes(ids, { color: picked })} />
      <IconButton
        label={allArchived ? 'Unarchive' : 'Archive'}
        onClick={() => void setArchived(ids, !allArchived)}
      >
        {allArchived ? <ArchiveRestore size={18} /> : <Archive size={18} />}
      </IconButton>
      <IconButton label="Delete" onClick={() => void moveToTrash(ids)}>
        <Trash2 size={18} />
      </IconButton>
    </>
  );
}

export function PinButton({ pinned, onClick }: { pinned: boolean; onClick: () => void }) {
  return (
    <IconButton label={pinned ? 'Unpin' : 'Pin'} pressed={pinned} onClick={onClick} class="pin">
      {pinned ? <PinOff size={18} /> : <Pin size={18} />}
    </IconButton>
  );
}

/** "Show checkboxes" / "Hide checkboxes": the note as a list or as text. */
export function ChecklistToggle({ on, onClick }: { on: boolean; onClick: () => void }) {
  return (
    <IconButton label={on ? 'Hide checkboxes' : 'Show checkboxes'} pressed={on} onClick={onClick}>
      <SquareCheck size={18} />
    </IconButton>
  );
}
