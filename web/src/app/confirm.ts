/**
 * One confirmation at a time, asked before an action nothing can undo (issue 30: "Nothing is
 * lost by one tap"): `askFirst` shows it (ConfirmHost), the action runs on its button.
 */
import { signal } from '@preact/signals';

export interface Confirmation {
  /** The question, as in Keep: "Delete note forever?". */
  title: string;
  /** What it means, if the title does not say it all. */
  text?: string;
  /** The button that acts. */
  confirm: string;
  action: () => unknown;
}

export const confirmation = signal<Confirmation | null>(null);

export function askFirst(request: Confirmation): void {
  confirmation.value = request;
}
