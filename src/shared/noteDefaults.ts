import type { NoteColor } from './colors.js';

/**
 * The fields of a note that its creator did not set (D-NOTE-1): the server's create, and the web
 * app's view of a note made on the device before the server has it.
 */
export const NOTE_DEFAULTS: {
  readonly title: string;
  readonly content: string;
  readonly color: NoteColor;
  readonly pinned: boolean;
  readonly archived: boolean;
  readonly trashed: boolean;
  readonly checklistMode: boolean;
  readonly sortOrder: number;
} = {
  title: '',
  content: '',
  color: 'default',
  pinned: false,
  archived: false,
  trashed: false,
  checklistMode: false,
  sortOrder: 0,
};
