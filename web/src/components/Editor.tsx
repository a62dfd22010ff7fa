import { type Signal, useSignal } from '@preact/signals';
import { ClipboardCopy, Copy, History, Link, Tag, Users } from 'lucide-preact';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { copyToClipboard, isEmptyNote, makeCopy, setPinned, updateNotes } from '../app/actions.js';
import { addImages } from '../app/media.js';
import { isMine, isShared, refreshPeople } from '../app/people.js';
import {
  continueEditing,
  editing,
  editorKey,
  engine,
  noteById,
  setEditorClose,
  showSnackbar,
} from '../app/state.js';
import { fromChecklist, toChecklist } from '../model/checklist.js';
import { addLabel, labelName } from '../model/labels.js';
import { mergeIncoming, movedPosition } from '../model/liveText.js';
import {
  ANNOUNCE_EVERY_MS,
  type Here,
  presenceText,
  withoutLapsed,
  withPresence,
} from '../model/presence.js';
import type { LocalNote } from '../sync/index.js';
import { AddImageButton, imageDropAndPaste } from './AddImage.js';
import { useAutoGrow } from './autoGrow.js';
import { ChecklistEditor } from './ChecklistEditor.js';
import { ConflictBadge } from './Conflicts.js';
import { IconButton } from './IconButton.js';
import { ChecklistToggle, NoteActions, PinButton } from './NoteActions.js';
import { NoteImages } from './NoteImages.js';
import { CardPeople, CollaboratorsDialog, ShareLinkDialog } from './PeopleDialogs.js';
import { historyOf } from './VersionHistory.js';

/** Typing is written this long after the last keystroke (and at once on close). */
const SAVE_DELAY_MS = 300;

/**
 * Takes a text that changed elsewhere into a field of the open note (issue 28): merged with what
 * the person typed since `base` and not saved yet; when the field has the focus, its caret and
 * selection stay where they were in the person's text.
 */
function takeIncoming(
  field: Signal<string>,
  element: HTMLInputElement | HTMLTextAreaElement | null,
  base: string,
  incoming: string,
) {
  if (incoming === base) return;
  const shown = field.value;
  const merged = mergeIncoming(base, shown, incoming);
  if (merged === shown) return;
  if (element && element.ownerDocument.activeElement === element && element.value === shown) {
    const { selectionStart, selectionEnd, selectionDirection } = element;
    // Written here first, so that the render after finds it already there and leaves the caret.
    element.value = merged;
    if (selectionStart !== null && selectionEnd !== null)
      element.setSelectionRange(
        movedPosition(shown, merged, selectionStart),
        movedPosition(shown, merged, selectionEnd),
        selectionDirection ?? undefined,
      );
  }
  field.value = merged;
}

/**
 * Who else has this shared note open (model/presence.ts): this person's presence is announced
 * while it is open, and the others' is heard from the live stream.
 */
function usePresence(noteId: string, shared: boolean): Here {
  const here = useSignal<Here>(new Map());
  useEffect(() => {
    const current = engine.value;
    if (!shared || !current) return;
    const announce = () => void current.announce(noteId, true);
    const leave = () => void current.announce(noteId, false);
    announce();
    const timer = setInterval(() => {
      here.value = withoutLapsed(here.value, Date.now());
      announce();
    }, ANNOUNCE_EVERY_MS);
    const stop = current.subscribe(({ presence }) => {
      if (presence?.noteId !== noteId) return;
      const next = withPresence(here.value, presence, Date.now());
      here.value = next.here;
      // Nobody keeps presence: someone who just came learns from us that we are here.
      if (next.arrived) announce();
    });
    globalThis.addEventListener('pagehide', leave);
    return () => {
      clearInterval(timer);
      stop();
      globalThis.removeEventListener('pagehide', leave);
      leave();
      here.value = new Map();
    };
  }, [noteId, shared]);
  return here.value;
}

const GONE_MESSAGE = 'This note was deleted elsewhere or is no longer shared with you.';

/** The open note: a modal dialog on desktop, full screen on a phone; saves as you type. */
export function Editor() {
  const id = editing.value;
  const note = id ? noteById(id) : undefined;
  // The note as last shown: when it goes (deleted elsewhere, no longer shared) the dialog stays
  // until what was typed is saved (docs/webapp.md "Several devices and tabs").
  const shown = useRef<LocalNote | undefined>(undefined);
  if (note) shown.current = note;
  else if (!id || (shown.current && editorKey(shown.current.id) !== editorKey(id))) shown.current = undefined;
  if (!id || !shown.current) return null;
  return <EditorDialog key={editorKey(id)} note={shown.current} gone={!note} />;
}

function EditorDialog({ note, gone }: { note: LocalNote; gone: boolean }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const textBox = useRef<HTMLTextAreaElement>(null);
  const titleBox = useRef<HTMLInputElement>(null);
  const title = useSignal(note.title);
  const content = useSignal(note.content);
  const labelling = useSignal(false);
  const peopleDialog = useSignal<'collaborators' | 'share' | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  // The note as last rendered, for the save that runs when the dialog goes away.
  const latest = useRef(note);
  latest.current = note;
  const goneRef = useRef(gone);
  goneRef.current = gone;

  /**
   * Writes what was typed since the last save. Into the note shown, or, when it went meanwhile,
   * where the engine keeps its text (its recovered copy, or a new one): the editor goes on there.
   */
  const save = async (): Promise<string | undefined> => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    const shown = latest.current;
    const fields: { title?: string; content?: string } = {};
    if (title.value !== shown.title) fields.title = title.value;
    if (content.value !== shown.content) fields.content = content.value;
    const current = engine.value;
    if (!current || (Object.keys(fields).length === 0 && !goneRef.current)) return shown.id;
    const holder = await current.saveText(shown.id, fields, shown);
    if (holder && holder !== shown.id) continueEditing(shown.id, holder);
    return holder;
  };
  const edit = (field: typeof title, value: string) => {
    field.value = value;
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => void save(), SAVE_DELAY_MS);
  };
  const close = () => {
    void save();
    editing.value = null;
    if (isEmptyNote({ title: title.value, content: content.value }) && !note.trashed) {
      void updateNotes([note.id], { trashed: true }, 'Empty note discarded');
    }
  };

  // Gone from the device (deleted elsewhere, no longer shared): what was typed is saved into its
  // recovered copy and the editor goes on there; with nothing typed, it closes and says why.
  useEffect(() => {
    if (!gone) return;
    void save().then((holder) => {
      if (holder || editing.value !== note.id) return;
      editing.value = null;
      showSnackbar(GONE_MESSAGE);
    });
  }, [gone]);

  // Back closes the note as its Close button does (state.ts).
  useEffect(() => {
    setEditorClose(close);
    return () => setEditorClose(null);
  });

  // Changes from elsewhere (a live hint's pull, another tab) show at once, merged with typing.
  // `taken`: the note's text as the editor last took it in, the base of that merge.
  const taken = useRef({ title: note.title, content: note.content });
  useLayoutEffect(() => {
    takeIncoming(title, titleBox.current, taken.current.title, note.title);
    takeIncoming(content, textBox.current, taken.current.content, note.content);
    taken.current = { title: note.title, content: note.content };
  }, [note.title, note.content]);
  // A note not on the server yet has no collaborators to ask for (the server would answer 404).
  const onServer = note.version > 0;
  const here = usePresence(note.id, onServer && isShared(note));
  useEffect(() => {
    if (onServer) void refreshPeople(note.id);
  }, [note.id, onServer]);
  // Before the text box measures itself (useAutoGrow): a closed dialog lays nothing out.
  useLayoutEffect(() => {
    dialog.current?.showModal();
    // Archived, trashed or deleted from the toolbar: what was typed is still written.
    return () => void save();
  }, []);
  useAutoGrow(textBox, content.value);

  const readOnly = note.trashed;
  const addFiles = (files: File[]) => void addImages(note.id, files);
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the backdrop click has Escape (onCancel) and Close for keyboards
    <dialog
      ref={dialog}
      class={`editor note-${note.color}`}
      aria-label={note.title || 'Note'}
      data-note-id={note.id}
      onCancel={(event) => {
        event.preventDefault();
        close();
      }}
      onClick={(event) => {
        if (event.target === dialog.current) close();
      }}
      {...(readOnly ? {} : imageDropAndPaste(addFiles))}
    >
      <NoteImages note={note} large />
      <ConflictBadge note={note} />
      <div class="editor-head">
        <input
          ref={titleBox}
          class="title-input"
          aria-label="Title"
          placeholder="Title"
          value={title.value}
          readOnly={readOnly}
          onInput={(event) => edit(title, event.currentTarget.value)}
        />
        {!readOnly && (
          <PinButton pinned={note.pinned} onClick={() => void setPinned([note.id], !note.pinned)} />
        )}
      </div>
      {note.checklistMode && !readOnly ? (
        <ChecklistEditor content={content.value} onChange={(value) => edit(content, value)} />
      ) : (
        <textarea
          ref={textBox}
          class="text-input"
          aria-label="Note"
          placeholder="Note"
          value={content.value}
          readOnly={readOnly}
          rows={8}
          onInput={(event) => edit(content, event.currentTarget.value)}
        />
      )}
      {labelling.value && (
        <input
          class="label-input"
          aria-label="Label name"
          placeholder="Label name, then Enter"
          list="label-suggestions"
          onKeyDown={(event) => {
            const typed = event.currentTarget.value;
            if (event.key === 'Enter' && labelName(typed) !== '') {
              event.preventDefault();
              edit(content, addLabel(content.value, typed));
              void save();
              labelling.value = false;
            }
          }}
          ref={(element) => element?.focus()}
        />
      )}
      <CardPeople note={note} />
      <p class="presence" aria-live="polite">
        {presenceText(here)}
      </p>
      <p class="edited">Edited {new Date(note.updatedAt).toLocaleString()}</p>
      <div class="toolbar">
        {!readOnly && (
          <>
            <ChecklistToggle
              on={note.checklistMode}
              onClick={() => {
                const converted = note.checklistMode
                  ? fromChecklist(content.value)
                  : toChecklist(content.value);
                content.value = converted;
                void updateNotes([note.id], { checklistMode: !note.checklistMode, content: converted });
              }}
            />
            <IconButton label="Add label" onClick={() => (labelling.value = !labelling.value)}>
              <Tag size={18} />
            </IconButton>
            <IconButton label="Collaborators" onClick={() => (peopleDialog.value = 'collaborators')}>
              <Users size={18} />
            </IconButton>
            {isMine(note) && (
              <IconButton label="Share link" onClick={() => (peopleDialog.value = 'share')}>
                <Link size={18} />
              </IconButton>
            )}
            <AddImageButton onFiles={addFiles} />
            <IconButton label="Version history" onClick={() => (historyOf.value = note.id)}>
              <History size={18} />
            </IconButton>
            <IconButton
              label="Make a copy"
              onClick={() => {
                void save();
                void makeCopy(note, { title: title.value, content: content.value });
              }}
            >
              <Copy size={18} />
            </IconButton>
            <IconButton
              label="Copy to clipboard"
              onClick={() => void copyToClipboard({ title: title.value, content: content.value })}
            >
              <ClipboardCopy size={18} />
            </IconButton>
          </>
        )}
        <NoteActions notes={[note]} withPin={false} />
        <span class="spacer" />
        <button type="button" class="text-button" onClick={close}>
          Close
        </button>
      </div>
      {peopleDialog.value === 'collaborators' && (
        <CollaboratorsDialog note={note} onClose={() => (peopleDialog.value = null)} />
      )}
      {peopleDialog.value === 'share' && (
        <ShareLinkDialog note={note} onClose={() => (peopleDialog.value = null)} />
      )}
    </dialog>
  );
}
