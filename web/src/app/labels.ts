/**
 * "Edit labels" (issue 30 item 13): create, rename, merge and delete labels. A label is the
 * hashtag in notes' text (decision 0013), so renaming, merging and deleting rewrite the text of
 * every note that has it, one write per note through the sync engine (offline too; sync and
 * version history see an ordinary edit). A label created with no note yet exists only on this
 * device until a note has it.
 */
import { computed, signal } from '@preact/signals';
import { addLabel, labelName, labelsOf, renameLabel } from '../model/labels.js';
import { engine, labels, navigate, route } from './state.js';

const CREATED_KEY = 'keepsake:created-labels';

function readCreated(): string[] {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(CREATED_KEY) ?? '[]');
    return Array.isArray(stored) ? stored.filter((name): name is string => typeof name === 'string') : [];
  } catch {
    return [];
  }
}

/** Labels created in "Edit labels" that no note has yet. */
const created = signal<string[]>(readCreated());

function setCreated(names: string[]): void {
  created.value = names;
  localStorage.setItem(CREATED_KEY, JSON.stringify(names));
}

/** Every label: the notes' hashtags and the ones created here, sorted. */
export const allLabelNames = computed(() => [...new Set([...labels.value, ...created.value])].sort());

/** Whether "Edit labels" is open. */
export const editingLabels = signal(false);

/** A new label with no note yet; false when the name is empty or taken. */
export function createLabel(typed: string): boolean {
  const name = labelName(typed);
  if (name === '' || allLabelNames.value.includes(name)) return false;
  setCreated([...created.value, name]);
  return true;
}

/**
 * Renames label `from` to `typed` (merging it into that label when it exists), or deletes it
 * (`typed` null): one write per note that has it, archived and trashed notes included.
 */
export async function relabel(from: string, typed: string | null): Promise<void> {
  const to = typed === null ? null : labelName(typed);
  if (to === '' || to === from) return;
  // A label no note has yet is renamed here only.
  const names = created.value.filter((name) => name !== from);
  if (to !== null && created.value.includes(from) && !allLabelNames.value.includes(to)) names.push(to);
  setCreated(names);
  const current = engine.value;
  if (!current) return;
  for (const note of [...current.notes().values()]) {
    if (!labelsOf(note).includes(from)) continue;
    await current.update(note.id, (stands) => {
      const fields = renameLabel(stands, from, to);
      return Object.keys(fields).length > 0 ? fields : null;
    });
  }
  const shown = route.value;
  if (shown.view === 'label' && shown.label === from)
    navigate(to === null ? { view: 'notes' } : { view: 'label', label: to });
}

/** The note whose labels are being chosen ("Labels" on its card). */
export const labellingNote = signal<string | null>(null);

/** Gives note `id` label `typed` (its hashtag on the trailing tags-only line) or takes it away. */
export async function setLabel(id: string, typed: string, on: boolean): Promise<void> {
  const name = labelName(typed);
  if (name === '') return;
  // From the note as it stands when the write runs: a quick second tick builds on the first.
  await engine.value?.update(id, (note) => {
    if (labelsOf(note).includes(name) === on) return null;
    return on ? { content: addLabel(note.content, name) } : renameLabel(note, name, null);
  });
}
