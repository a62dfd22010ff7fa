/** What the buttons and shortcuts do to notes: one engine call each, with Undo where Keep has it. */
import { sortOrderOnTop, sortOrdersForMove } from '../model/ordering.js';
import type { LocalNote, NoteFields } from '../sync/index.js';
import { askFirst } from './confirm.js';
import { editing, engine, selection, showSnackbar, sortedNotes } from './state.js';

function current() {
  const value = engine.value;
  if (!value) throw new Error('no sync engine');
  return value;
}

/** The fields `fields` would change, as they are now on each note: what Undo writes back. */
function previousValues(ids: string[], fields: NoteFields): Map<string, NoteFields> {
  const notes = current().notes();
  const before = new Map<string, NoteFields>();
  for (const id of ids) {
    const note = notes.get(id);
    if (!note) continue;
    const old: NoteFields = {};
    for (const key of Object.keys(fields) as (keyof NoteFields)[]) Object.assign(old, { [key]: note[key] });
    before.set(id, old);
  }
  return before;
}

/** Changes notes; with a message, the snackbar offers Undo, which restores each note's old values. */
export async function updateNotes(ids: string[], fields: NoteFields, message?: string): Promise<void> {
  const before = message ? previousValues(ids, fields) : null;
  // Archived or trashed from its editor: the note leaves the view, and so does the editor.
  if ((fields.archived || fields.trashed) && editing.value && ids.includes(editing.value))
    editing.value = null;
  const written = current().update(ids, fields);
  // Offered at once, not once the device has written the change: a Ctrl+Z that quick undoes it.
  // The device's writes run in the order they are asked for, so the undo's comes after.
  if (message && before) {
    showSnackbar(message, () => {
      for (const [id, old] of before) void current().update(id, old);
    });
  }
  await written;
}

const count = (ids: string[], one: string, many: string) =>
  ids.length === 1 ? one : many.replace('{n}', String(ids.length));

export const setPinned = (ids: string[], pinned: boolean) =>
  // Pinning brings an archived note back to the notes, as in Keep.
  updateNotes(ids, pinned ? { pinned, archived: false } : { pinned });

export const setArchived = (ids: string[], archived: boolean) =>
  updateNotes(
    ids,
    archived ? { archived, pinned: false } : { archived },
    archived
      ? count(ids, 'Note archived', '{n} notes archived')
      : count(ids, 'Note unarchived', '{n} notes unarchived'),
  );

export const moveToTrash = (ids: string[]) =>
  updateNotes(ids, { trashed: true }, count(ids, 'Note moved to trash', '{n} notes moved to trash'));

export const restore = (ids: string[]) =>
  updateNotes(ids, { trashed: false }, count(ids, 'Note restored', '{n} notes restored'));

async function deleteNow(ids: string[]): Promise<void> {
  await current().deleteForever(ids);
  if (editing.value && ids.includes(editing.value)) editing.value = null;
  showSnackbar(count(ids, 'Note deleted forever', '{n} notes deleted forever'));
}

/** Asks first, as Keep does: nothing brings the notes back. */
export function deleteForever(ids: string[]): void {
  askFirst({
    title: count(ids, 'Delete note forever?', 'Delete {n} notes forever?'),
    confirm: 'Delete forever',
    action: () => deleteNow(ids),
  });
}

export function emptyTrash(): void {
  const ids = sortedNotes.value.filter((note) => note.trashed).map((note) => note.id);
  if (ids.length === 0) return;
  askFirst({
    title: 'Empty trash?',
    text: count(
      ids,
      'The note in Trash will be deleted forever.',
      'All {n} notes in Trash will be deleted forever.',
    ),
    confirm: 'Empty trash',
    action: () => deleteNow(ids),
  });
}

/** A new note on top of the others. */
export function createNote(fields: NoteFields): Promise<LocalNote> {
  return current().create({ ...fields, sortOrder: sortOrderOnTop(current().notes().values()) });
}

/**
 * "Make a copy" (issue 30 item 14): a new note on top with the text, colour and list mode, opened
 * in place of the original. Images stay with the original (attachments are the server's files).
 */
export async function makeCopy(note: LocalNote, text: Pick<LocalNote, 'title' | 'content'>): Promise<void> {
  const copy = await createNote({
    title: text.title,
    content: text.content,
    color: note.color,
    checklistMode: note.checklistMode,
  });
  editing.value = copy.id;
  showSnackbar(note.attachments.length > 0 ? 'Copy made, without the images' : 'Copy made');
}

/** "Copy to clipboard": the title, a blank line and the text, as plain text (and Markdown). */
export async function copyToClipboard(text: Pick<LocalNote, 'title' | 'content'>): Promise<void> {
  const whole = [text.title.trim(), text.content].filter(Boolean).join('\n\n');
  try {
    await navigator.clipboard.writeText(whole);
    showSnackbar('Copied to clipboard');
  } catch {
    showSnackbar('This browser did not allow copying (it needs HTTPS or localhost)');
  }
}

export function isEmptyNote(note: Pick<LocalNote, 'title' | 'content'>): boolean {
  return note.title.trim() === '' && note.content.trim() === '';
}

export function toggleSelected(id: string): void {
  const next = new Set(selection.value);
  if (!next.delete(id)) next.add(id);
  selection.value = next;
}

/** Drag or Shift+J/K: the note takes index `to` of its section (without it). */
export async function moveNote(section: readonly LocalNote[], note: LocalNote, to: number): Promise<void> {
  for (const [id, sortOrder] of sortOrdersForMove(section, note, to)) {
    if (current().notes().get(id)?.sortOrder !== sortOrder) await current().update(id, { sortOrder });
  }
}
