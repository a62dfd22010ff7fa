import { signal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { updateNotes } from '../app/actions.js';
import { noteById, sortedNotes } from '../app/state.js';
import {
  type ConflictChoice,
  conflictMark,
  conflictOriginal,
  resolveConflict,
  wordChanges,
} from '../model/conflicts.js';
import type { LocalNote } from '../sync/index.js';

/** The conflict copy open in Compare. */
const comparing = signal<string | null>(null);

/** On a conflict copy: a badge and "Compare" (when the note it came from is on the device). */
export function ConflictBadge({ note }: { note: LocalNote }) {
  const mark = conflictMark(note.title);
  if (!mark || note.trashed) return null;
  const original = conflictOriginal(note, sortedNotes.value);
  return (
    <div class="conflict">
      <span class="badge">Conflict copy</span>
      {original && (
        <button
          type="button"
          class="text-button"
          onClick={(event) => {
            event.stopPropagation();
            comparing.value = note.id;
          }}
        >
          Compare
        </button>
      )}
    </div>
  );
}

const CHOICES: { choice: ConflictChoice; label: string; done: string }[] = [
  { choice: 'this', label: 'Keep this', done: 'Kept the copy; the note went to Trash' },
  { choice: 'that', label: 'Keep that', done: 'Kept the note; the copy went to Trash' },
  { choice: 'both', label: 'Keep both', done: 'Kept both' },
];

/** The copy ("this") and its note ("that") side by side, differences marked, and the choices. */
export function CompareDialog() {
  const id = comparing.value;
  const copy = id ? noteById(id) : undefined;
  const original = copy ? conflictOriginal(copy, sortedNotes.value) : undefined;
  if (!copy || !original) return null;
  return <Compare key={copy.id} copy={copy} original={original} />;
}

function Compare({ copy, original }: { copy: LocalNote; original: LocalNote }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => dialog.current?.showModal(), []);
  const close = () => (comparing.value = null);
  const parts = wordChanges(original.content, copy.content);
  const choose = async (choice: ConflictChoice, done: string) => {
    close();
    const writes = resolveConflict(choice, copy, original);
    for (const [index, write] of writes.entries())
      await updateNotes([write.id], write.fields, index === writes.length - 1 ? done : undefined);
  };
  return (
    <dialog
      ref={dialog}
      class="compare"
      aria-labelledby="compare-heading"
      onCancel={(event) => {
        event.preventDefault();
        close();
      }}
    >
      <h2 id="compare-heading">Compare versions</h2>
      <div class="compare-columns">
        <section aria-labelledby="compare-this">
          <h3 id="compare-this">This copy</h3>
          <p class="compare-title">{conflictMark(copy.title)?.title}</p>
          <pre class="compare-text">
            {parts.map((part, index) =>
              part.removed ? null : part.added ? <ins key={index}>{part.value}</ins> : part.value,
            )}
          </pre>
        </section>
        <section aria-labelledby="compare-that">
          <h3 id="compare-that">That note</h3>
          <p class="compare-title">{original.title}</p>
          <pre class="compare-text">
            {parts.map((part, index) =>
              part.added ? null : part.removed ? <del key={index}>{part.value}</del> : part.value,
            )}
          </pre>
        </section>
      </div>
      <div class="toolbar">
        {CHOICES.map(({ choice, label, done }) => (
          <button key={choice} type="button" class="text-button" onClick={() => void choose(choice, done)}>
            {label}
          </button>
        ))}
        <span class="spacer" />
        <button type="button" class="text-button" onClick={close}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
