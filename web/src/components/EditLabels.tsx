import { useSignal } from '@preact/signals';
import { Check, Plus, Trash2 } from 'lucide-preact';
import { askFirst } from '../app/confirm.js';
import { allLabelNames, createLabel, editingLabels, relabel } from '../app/labels.js';
import { labelName } from '../model/labels.js';
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
