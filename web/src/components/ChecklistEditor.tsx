import { useSignal } from '@preact/signals';
import { X } from 'lucide-preact';
import {
  addItem,
  checklistItems,
  moveItem,
  removeItem,
  setItemChecked,
  setItemText,
} from '../model/checklist.js';
import { IconButton } from './IconButton.js';

/**
 * The editor's list: open items, a "List item" field that adds one, and ticked items under
 * "Completed". Alt+↑/↓ moves an item. Every change is an edit of the content text.
 */
export function ChecklistEditor({
  content,
  onChange,
}: {
  content: string;
  onChange: (content: string) => void;
}) {
  const items = checklistItems(content);
  const showDone = useSignal(true);
  const open = items.filter((item) => !item.checked);
  const done = items.filter((item) => item.checked);
  const row = (item: (typeof items)[number]) => (
    <li key={item.line} class={item.checked ? 'done' : ''}>
      <input
        type="checkbox"
        checked={item.checked}
        aria-label={item.text || 'Empty item'}
        onChange={(event) => onChange(setItemChecked(content, item.line, event.currentTarget.checked))}
      />
      <input
        class="item-text"
        aria-label="List item text"
        value={item.text}
        onInput={(event) => onChange(setItemText(content, item.line, event.currentTarget.value))}
        onKeyDown={(event) => {
          if (event.altKey && (event.key === 'ArrowUp' || event.key === 'ArrowDown')) {
            event.preventDefault();
            onChange(moveItem(content, item.line, event.key === 'ArrowUp' ? -1 : 1));
          } else if (event.key === 'Backspace' && event.currentTarget.value === '') {
            event.preventDefault();
            onChange(removeItem(content, item.line));
          }
        }}
      />
      <IconButton label="Delete item" onClick={() => onChange(removeItem(content, item.line))}>
        <X size={16} />
      </IconButton>
    </li>
  );
  return (
    <div class="checklist">
      <ul>{open.map(row)}</ul>
      <input
        class="new-item"
        aria-label="List item"
        placeholder="+ List item"
        onKeyDown={(event) => {
          const value = event.currentTarget.value;
          if (event.key === 'Enter' && value.trim() !== '') {
            event.preventDefault();
            onChange(addItem(content, value));
            event.currentTarget.value = '';
          }
        }}
      />
      {done.length > 0 && (
        <section aria-label="Completed">
          <button
            type="button"
            class="text-button"
            aria-expanded={showDone.value}
            onClick={() => (showDone.value = !showDone.value)}
          >
            {done.length === 1 ? '1 Completed item' : `${done.length} Completed items`}
          </button>
          {showDone.value && <ul>{done.map(row)}</ul>}
        </section>
      )}
    </div>
  );
}
