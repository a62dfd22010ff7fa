import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { confirmation } from '../app/confirm.js';

interface Props {
  /** The question, as in Keep: "Delete note forever?". Names the dialog. */
  title: string;
  /** The button that acts, e.g. "Delete forever". */
  confirm: string;
  onConfirm: () => void;
  onCancel: () => void;
  children?: ComponentChildren;
}

/**
 * Asks before an action nothing can undo (issue 30: "Nothing is lost by one tap"): an
 * alertdialog with "Cancel" (focused first, and Escape) and the action.
 */
export function Confirm({ title, confirm, onConfirm, onCancel, children }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => dialog.current?.showModal(), []);
  const headingId = `confirm-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: only stops the click reaching a dialog behind (the editor's)
    <dialog
      ref={dialog}
      class="modal confirm"
      role="alertdialog"
      aria-labelledby={headingId}
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
      onClick={(event) => event.stopPropagation()}
    >
      <h2 id={headingId}>{title}</h2>
      {children}
      <div class="modal-actions">
        {/* biome-ignore lint/a11y/noAutofocus: the safe answer has the focus in a dialog that destroys */}
        <button type="button" class="text-button" autoFocus onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={onConfirm}>
          {confirm}
        </button>
      </div>
    </dialog>
  );
}

/** The confirmation asked for with `askFirst` (app/confirm.ts), if any. */
export function ConfirmHost() {
  const asked = confirmation.value;
  if (!asked) return null;
  const close = () => {
    if (confirmation.peek() === asked) confirmation.value = null;
  };
  return (
    <Confirm
      title={asked.title}
      confirm={asked.confirm}
      onCancel={close}
      onConfirm={() => {
        close();
        void asked.action();
      }}
    >
      {asked.text && <p>{asked.text}</p>}
    </Confirm>
  );
}
