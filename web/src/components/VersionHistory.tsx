import { signal } from '@preact/signals';
import { useEffect, useRef, useState } from 'preact/hooks';
import { updateNotes } from '../app/actions.js';
import { noteById } from '../app/state.js';

interface Revision {
  version: number;
  createdAt: string;
  authorId: number;
  title: string;
  content: string;
}

/** The note whose history is open. */
export const historyOf = signal<string | null>(null);

/**
 * "Version history": the note's revisions from the server (GET /api/notes/{id}/revisions), newest
 * first; restoring one writes its title and text as a normal edit, so it syncs like typing.
 */
export function VersionHistory() {
  const id = historyOf.value;
  if (!id) return null;
  return <HistoryDialog key={id} noteId={id} />;
}

function HistoryDialog({ noteId }: { noteId: string }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [revisions, setRevisions] = useState<Revision[] | 'failed' | null>(null);
  useEffect(() => {
    dialog.current?.showModal();
    fetch(`/api/notes/${encodeURIComponent(noteId)}/revisions`)
      .then(async (response) => {
        if (response.status === 404) return setRevisions([]); // not on the server yet
        if (!response.ok) throw new Error(String(response.status));
        setRevisions((await response.json()) as Revision[]);
      })
      .catch(() => setRevisions('failed'));
  }, [noteId]);
  const close = () => (historyOf.value = null);
  const restore = (revision: Revision) => {
    const note = noteById(noteId);
    close();
    if (!note) return;
    const fields: { title?: string; content?: string } = {};
    if (note.title !== revision.title) fields.title = revision.title;
    if (note.content !== revision.content) fields.content = revision.content;
    void updateNotes([noteId], fields, `Version ${revision.version} restored`);
  };
  return (
    <dialog
      ref={dialog}
      class="history"
      aria-labelledby="history-heading"
      onCancel={(event) => {
        event.preventDefault();
        close();
      }}
    >
      <h2 id="history-heading">Version history</h2>
      {revisions === null && <p>Loading…</p>}
      {revisions === 'failed' && <p>The history is on the server: it shows when you are online.</p>}
      {Array.isArray(revisions) && revisions.length === 0 && <p>No earlier versions yet.</p>}
      {Array.isArray(revisions) && (
        <ol class="revisions">
          {revisions.map((revision, index) => (
            <li key={revision.version}>
              <p class="revision-when">
                Version {revision.version} · {new Date(revision.createdAt).toLocaleString()}
                {index === 0 && ' (current)'}
              </p>
              {revision.title && <p class="revision-title">{revision.title}</p>}
              <p class="revision-text">{revision.content.slice(0, 300)}</p>
              {index > 0 && (
                <button type="button" class="text-button" onClick={() => restore(revision)}>
                  Restore version {revision.version}
                </button>
              )}
            </li>
          ))}
        </ol>
      )}
      <div class="toolbar">
        <span class="spacer" />
        <button type="button" class="text-button" onClick={close}>
          Close
        </button>
      </div>
    </dialog>
  );
}
