import { useSignal } from '@preact/signals';
import { Check, Plus, Tag, Trash2 } from 'lucide-preact';
import { askFirst } from '../app/confirm.js';
import {
  allLabelNames,
  createLabel,
  editingLabels,
  labellingNote,
  relabel,
  setLabel,
} from '../app/labels.js';
import { noteById } from '../app/state.js';
import { labelName, labelsOf } from '../model/labels.js';
import { IconButton } from './IconButton.js';
import { Modal } from './Modal.js';

/**
 * "Edit labels" (issue 30 item 13), opened from the navigation: a field to create a label, and
 * each label in a text field holding its name: Enter renames it (onto an existing name: merges,
 * after asking), the bin deletes it (after asking).
 */
export function EditLabels() {
  if (!editingLabels.value) return null;
  return (
    <Modal title="Edit labels" onClose={() => (editingLabels.value = false)}>
      <NewLabel />
      <ul class="label-list">
        {allLabelNames.value.map((name) => (
          <LabelRow key={name} name={name} />
        ))}
      </ul>
    </Modal>
  );
}

function NewLabel() {
  const typed = useSignal('');
  const add = () => {
    if (createLabel(typed.value)) typed.value = '';
  };
  return (
    <div class="label-row">
      <input
        aria-label="Create new label"
        placeholder="Create new label"
        value={typed.value}
        onInput={(event) => (typed.value = event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key !== 'Enter') return;
          event.preventDefault();
          add();
        }}
      />
      <IconButton label="Create label" onClick={add}>
        <Plus size={18} />
      </IconButton>
    </div>
  );
}

function LabelRow({ name }: { name: string }) {
  const typed = useSignal(name);
  const rename = () => {
    const to = labelName(typed.value);
    if (to === '' || to === name) {
      typed.value = name;
      return;
    }
    if (!allLabelNames.value.includes(to)) return void relabel(name, to);
    askFirst({
      title: 'Merge labels?',
      text: `Notes labelled #${name} will be labelled #${to}.`,
      confirm: 'Merge',
      action: () => relabel(name, to),
    });
  };
  return (
    <li class="label-row">
      <input
        aria-label={`Label ${name}`}
        value={typed.value}
        onInput={(event) => (typed.value = event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key !== 'Enter') return;
          event.preventDefault();
          rename();
        }}
      />
      <IconButton label={`Rename label ${name}`} onClick={rename}>
        <Check size={18} />
      </IconButton>
      <IconButton
        label={`Delete label ${name}`}
        onClick={() =>
          askFirst({
            title: 'Delete label?',
            text: `#${name} will be removed from its notes; the notes stay.`,
            confirm: 'Delete',
            action: () => relabel(name, null),
          })
        }
      >
        <Trash2 size={18} />
      </IconButton>
    </li>
  );
}

/** "Labels" on a card (issue 30 item 13, as Keep's "Add label" in a card's menu). */
export function LabelsButton({ noteId }: { noteId: string }) {
  return (
    <IconButton label="Labels" onClick={() => (labellingNote.value = noteId)}>
      <Tag size={18} />
    </IconButton>
  );
}

/** "Label note": a box per label, ticked when the note has it, and a field for a new one. */
export function LabelNote() {
  const id = labellingNote.value;
  const note = id ? noteById(id) : undefined;
  const typed = useSignal('');
  // The ticks whose writes are still running: a render before a write lands (a sync, another
  // tab) shows the tick, not the note as it was.
  const ticking = useSignal<ReadonlyMap<string, boolean>>(new Map());
  if (!id || !note) return null;
  const close = () => {
    labellingNote.value = null;
    typed.value = '';
  };
  const has = labelsOf(note);
  const tick = (name: string, on: boolean) => {
    ticking.value = new Map(ticking.value).set(name, on);
    void setLabel(id, name, on).finally(() => {
      if (ticking.value.get(name) !== on) return;
      const left = new Map(ticking.value);
      left.delete(name);
      ticking.value = left;
    });
  };
  return (
    <Modal title="Label note" onClose={close}>
      <input
        class="label-input"
        aria-label="Enter label name"
        placeholder="Enter label name"
        value={typed.value}
        onInput={(event) => (typed.value = event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key !== 'Enter') return;
          event.preventDefault();
          void setLabel(id, typed.value, true);
          typed.value = '';
        }}
      />
      <ul class="label-list">
        {allLabelNames.value.map((name) => (
          <li key={name} class="label-row">
            <label>
              <input
                type="checkbox"
                checked={ticking.value.get(name) ?? has.includes(name)}
                onChange={(event) => tick(name, event.currentTarget.checked)}
              />{' '}
              {name}
            </label>
          </li>
        ))}
      </ul>
    </Modal>
  );
}
