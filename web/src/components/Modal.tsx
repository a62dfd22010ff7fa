import { useSignal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { MIN_PASSWORD_LENGTH } from '../../../src/shared/api/limits.js';

interface Props {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
}

/** A modal dialog named by its heading; Escape, a backdrop click and "Done" close it. */
export function Modal({ title, onClose, children }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => dialog.current?.showModal(), []);
  const headingId = `modal-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the backdrop click has Escape (onCancel) and Done for keyboards
    <dialog
      ref={dialog}
      class="modal"
      aria-labelledby={headingId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onClick={(event) => {
        // Inside the editor's dialog: a click here is not one on the editor's backdrop.
        event.stopPropagation();
        if (event.target === dialog.current) onClose();
      }}
    >
      <h2 id={headingId}>{title}</h2>
      {children}
      <div class="modal-actions">
        <button type="button" class="text-button" onClick={onClose}>
          Done
        </button>
      </div>
    </dialog>
  );
}

/** A failure's message for the person (the server's D-ERR-1 message when there is one). */
export function messageOf(failure: unknown): string {
  return failure instanceof Error ? failure.message : String(failure);
}

/**
 * An error message to show, and `attempt(action)`: clears the message, runs the action, and on
 * failure shows its message.
 */
export function useAttempt() {
  const error = useSignal('');
  const attempt = async (action: () => Promise<void>) => {
    error.value = '';
    try {
      await action();
    } catch (failure) {
      error.value = messageOf(failure);
    }
  };
  return { error, attempt };
}

/** The message of a failed attempt, announced (role alert); nothing when there is none. */
export function ErrorAlert({ message }: { message: string }) {
  if (!message) return null;
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

/** A field for a new password: the server's minimum length, and a hint to password managers. */
export function NewPasswordField({ label, name }: { label: string; name: string }) {
  return (
    <label class="field">
      {label}
      <input
        name={name}
        type="password"
        required
        minLength={MIN_PASSWORD_LENGTH}
        autoComplete="new-password"
      />
    </label>
  );
}
