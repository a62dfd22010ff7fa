import { useSignal } from '@preact/signals';
import { GripVertical, X } from 'lucide-preact';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import type { createDragManager, sortable } from '../app/dragAndDrop.js';
import { withDragAndDrop } from '../app/lazyDragAndDrop.js';
import {
  addItem,
  backspaceItem,
  checklistItems,
  type ItemEdit,
  indentItem,
  moveItem,
  moveItemTo,
  removeItem,
  setItemChecked,
  setItemText,
  splitItem,
} from '../model/checklist.js';
import { IconButton } from './IconButton.js';

type Item = ReturnType<typeof checklistItems>[number];
/** The list's drag manager, once @dnd-kit/dom has loaded. */
interface Dragging {
  manager: ReturnType<typeof createDragManager>;
  sortable: typeof sortable;
}

/**
 * The editor's list: open items, a "List item" field that adds one, and ticked items under
 * "Completed". Every change is an edit of the content text. As in Keep: a handle drags an item
 * (with its sub-items), Alt+↑/↓ moves it, Enter adds the next item below (taking the text after
 * the caret), Backspace at an item's start removes an empty one or joins it to the one above,
 * Tab/Shift+Tab make it a sub-item and back. The caret follows the item through each of these.
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
  const list = useRef<HTMLDivElement>(null);
  /** Where the caret goes once an edit that moves items is rendered (-1: the "List item" field). */
  const caret = useRef<{ line: number; at?: number } | null>(null);
  const latest = useRef(content);
  latest.current = content;
  const dragging = useSignal<Dragging | null>(null);
  useEffect(
    () =>
      withDragAndDrop(({ createDragManager, onDrop, sortable }) => {
        const manager = createDragManager({ vertical: true });
        const stop = onDrop(manager, ({ source, target, edge }) =>
          apply(moveItemTo(latest.current, Number(source), Number(target), edge)),
        );
        dragging.value = { manager, sortable };
        return () => {
          stop();
          manager.destroy();
        };
      }),
    [],
  );
  useLayoutEffect(() => {
    const wanted = caret.current;
    if (!wanted) return;
    caret.current = null;
    const field = list.current?.querySelector<HTMLInputElement>(
      wanted.line < 0 ? '.new-item' : `.item-text[data-line="${wanted.line}"]`,
    );
    if (!field) return;
    field.focus();
    const at = wanted.at ?? field.value.length;
    field.setSelectionRange(at, at);
  });

  const apply = (edit: ItemEdit | null) => {
    if (!edit || edit.content === latest.current) return;
    caret.current = { line: edit.focus, at: edit.caret };
    onChange(edit.content);
  };

  const onItemKey = (event: KeyboardEvent, item: Item) => {
    const field = event.currentTarget as HTMLInputElement;
    const atStart = field.selectionStart === 0 && field.selectionEnd === 0;
    let edit: ItemEdit | null | undefined;
    if (event.altKey && (event.key === 'ArrowUp' || event.key === 'ArrowDown')) {
      edit = moveItem(content, item.line, event.key === 'ArrowUp' ? -1 : 1);
    } else if (event.key === 'Enter' && !event.isComposing) {
      edit = splitItem(content, item.line, field.selectionStart ?? field.value.length);
    } else if (event.key === 'Backspace' && atStart) {
      edit = backspaceItem(content, item.line);
    } else if (event.key === 'Tab' && (event.shiftKey ? item.indented : !item.indented)) {
      // The first item has nothing to hang under: Tab moves on as usual.
      const indented = indentItem(content, item.line, !event.shiftKey);
      if (indented.content === content) return;
      edit = { ...indented, caret: field.selectionStart ?? undefined };
    } else {
      return;
    }
    event.preventDefault();
    apply(edit);
  };

  const row = (item: Item) => (
    <ChecklistRow
      key={item.line}
      item={item}
      dragging={dragging.value}
      onTick={(checked) => onChange(setItemChecked(content, item.line, checked))}
      onText={(text) => onChange(setItemText(content, item.line, text))}
      onKeyDown={(event) => onItemKey(event, item)}
      onDelete={() => onChange(removeItem(content, item.line))}
    />
  );
  return (
    <div class="checklist" ref={list}>
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

/** One item: its drag handle, box, text and delete button. Open and ticked items drop only among their own. */
function ChecklistRow({
  item,
  dragging,
  onTick,
  onText,
  onKeyDown,
  onDelete,
}: {
  item: Item;
  dragging: Dragging | null;
  onTick: (checked: boolean) => void;
  onText: (text: string) => void;
  onKeyDown: (event: KeyboardEvent) => void;
  onDelete: () => void;
}) {
  const element = useRef<HTMLLIElement>(null);
  const handle = useRef<HTMLSpanElement>(null);
  useEffect(
    () =>
      dragging?.sortable(dragging.manager, {
        id: String(item.line),
        element: element.current!,
        handle: handle.current!,
        type: item.checked ? 'done' : 'open',
      }),
    [dragging, item.line, item.checked],
  );
  return (
    <li ref={element} class={`${item.checked ? 'done' : ''}${item.indented ? ' sub-item' : ''}`}>
      {/* Dragging is for the hand; the keyboard moves items with Alt+↑/↓. */}
      <span ref={handle} class="drag-handle" aria-hidden="true">
        <GripVertical size={18} />
      </span>
      <input
        type="checkbox"
        checked={item.checked}
        aria-label={item.text || 'Empty item'}
        onChange={(event) => onTick(event.currentTarget.checked)}
      />
      <input
        class="item-text"
        aria-label="List item text"
        data-line={item.line}
        value={item.text}
        onInput={(event) => onText(event.currentTarget.value)}
        onKeyDown={onKeyDown}
      />
      <IconButton label="Delete item" onClick={onDelete}>
        <X size={16} />
      </IconButton>
    </li>
  );
}
