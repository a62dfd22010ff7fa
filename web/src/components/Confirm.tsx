import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

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
        <button type="button" class="text-button danger" onClick={onConfirm}>
          {confirm}
        </button>
      </div>
    </dialog>
  );
}
