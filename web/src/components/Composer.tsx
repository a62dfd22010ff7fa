import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { createNote, isEmptyNote } from '../app/actions.js';
import { addImages, useBlobUrl } from '../app/media.js';
import { composerRequest } from '../app/shortcuts.js';
import {
  addItem,
  checklistItems,
  fromChecklist,
  setItemChecked,
  setItemText,
  toChecklist,
} from '../model/checklist.js';
import type { NoteColor } from '../sync/index.js';
import { AddImageButton, imageDropAndPaste } from './AddImage.js';
import { useAutoGrow } from './autoGrow.js';
import { ColorPicker } from './ColorPicker.js';
import { ChecklistToggle, PinButton } from './NoteActions.js';

/**
 * "Take a note…": a bar that expands in place into title, text and a toolbar. Closing it (Close,
 * Escape, a click outside, leaving the page) keeps the note unless it is empty.
 */
export function Composer() {
  const expanded = useSignal(false);
  const title = useSignal('');
  const content = useSignal('');
  const checklist = useSignal(false);
  const pinned = useSignal(false);
  const color = useSignal<NoteColor>('default');
  /** Images added before the note exists: queued for it when it is made. */
  const images = useSignal<File[]>([]);
  const form = useRef<HTMLFormElement>(null);
  const text = useRef<HTMLTextAreaElement>(null);
  useAutoGrow(text, `${expanded.value}${checklist.value}${content.value}`);

  /** In list mode: the items typed so far (checklist text); the text box holds the next one. */
  const items = useSignal('');

  const close = () => {
    if (!expanded.value) return;
    const note = {
      title: title.value,
      content: checklist.value ? withItem(items.value, content.value) : content.value,
    };
    const files = images.value;
    if (!isEmptyNote(note) || files.length > 0) {
      void createNote({
        title: note.title.trim(),
        content: note.content,
        checklistMode: checklist.value,
        pinned: pinned.value,
        color: color.value,
      }).then((created) => addImages(created.id, files));
    }
    expanded.value = false;
    title.value = content.value = items.value = '';
    checklist.value = pinned.value = false;
    color.value = 'default';
    images.value = [];
  };
  /**
   * What is typed in list mode: each finished line (Enter, or several pasted lines) becomes an
   * item with its box at once; the text box keeps the line being typed.
   */
  const typeItems = (value: string) => {
    const lines = value.split('\n');
    const typing = lines.pop() ?? '';
    for (const line of lines) items.value = withItem(items.value, line);
    content.value = typing;
  };
  /** "Show checkboxes" / "Hide checkboxes": what was typed becomes items, or items text again. */
  const toggleChecklist = () => {
    if (checklist.value)
      content.value = [fromChecklist(items.value), content.value].filter(Boolean).join('\n');
    else {
      items.value = toChecklist(content.value);
      content.value = '';
    }
    checklist.value = !checklist.value;
    text.current?.focus();
  };
  const addFiles = (files: File[]) => {
    images.value = [...images.value, ...files];
    expanded.value = true;
  };

  useEffect(() => {
    const outside = (event: PointerEvent) => {
      if (form.current && !form.current.contains(event.target as Node)) close();
    };
    document.addEventListener('pointerdown', outside);
    addEventListener('pagehide', close);
    return () => {
      document.removeEventListener('pointerdown', outside);
      removeEventListener('pagehide', close);
    };
  }, []);

  // The c and l shortcuts.
  useEffect(
    () =>
      composerRequest.subscribe((request) => {
        if (!request) return;
        // Handled: a composer mounted later (another view) must not open by itself.
        composerRequest.value = null;
        expanded.value = true;
        checklist.value = request.list;
        text.current?.focus();
      }),
    [],
  );

  return (
    <form
      ref={form}
      class={`composer note-${color.value}${expanded.value ? ' expanded' : ''}`}
      onSubmit={(event) => event.preventDefault()}
      {...imageDropAndPaste(addFiles)}
      onKeyDown={(event) => {
        if (event.key === 'Escape' || (event.key === 'Enter' && (event.ctrlKey || event.metaKey))) {
          event.preventDefault();
          close();
          (event.target as HTMLElement).blur();
        }
      }}
    >
      {images.value.length > 0 && (
        <div class="note-images large">
          {images.value.map((file, index) => (
            <ComposerImage key={index} file={file} />
          ))}
        </div>
      )}
      {expanded.value && (
        <div class="composer-head">
          <input
            class="title-input"
            aria-label="Title"
            placeholder="Title"
            value={title.value}
            onInput={(event) => (title.value = event.currentTarget.value)}
          />
          <PinButton pinned={pinned.value} onClick={() => (pinned.value = !pinned.value)} />
        </div>
      )}
      {checklist.value && items.value !== '' && (
        <ul class="checklist composer-items">
          {checklistItems(items.value).map((item) => (
            <li key={item.line}>
              <input
                type="checkbox"
                checked={item.checked}
                aria-label={item.text || 'Empty item'}
                onChange={(event) =>
                  (items.value = setItemChecked(items.value, item.line, event.currentTarget.checked))
                }
              />
              <input
                class="item-text"
                aria-label="List item text"
                value={item.text}
                onInput={(event) =>
                  (items.value = setItemText(items.value, item.line, event.currentTarget.value))
                }
              />
            </li>
          ))}
        </ul>
      )}
      <div class={checklist.value ? 'composer-item' : 'composer-text'}>
        {checklist.value && <span class="item-box" aria-hidden="true" />}
        <textarea
          ref={text}
          class="text-input"
          aria-label="Take a note…"
          placeholder={checklist.value ? 'List item' : 'Take a note…'}
          rows={expanded.value && !checklist.value ? 3 : 1}
          value={content.value}
          onFocus={() => (expanded.value = true)}
          onInput={(event) => {
            if (checklist.value) typeItems(event.currentTarget.value);
            else content.value = event.currentTarget.value;
          }}
        />
      </div>
      {expanded.value && (
        <div class="toolbar">
          <ChecklistToggle on={checklist.value} onClick={toggleChecklist} />
          <ColorPicker value={color.value} onPick={(picked) => (color.value = picked)} />
          <AddImageButton onFiles={addFiles} />
          <span class="spacer" />
          <button type="button" class="text-button" onClick={close}>
            Close
          </button>
        </div>
      )}
    </form>
  );
}

/** The list's text with `line` as one more unticked item (blank lines add none). */
function withItem(items: string, line: string): string {
  return line.trim() === '' ? items : addItem(items, line.trim());
}

function ComposerImage({ file }: { file: File }) {
  const url = useBlobUrl(file);
  return <figure class="note-image queued">{url && <img src={url} alt={file.name} />}</figure>;
}
