/**
 * "Collaborators" and "Share link" of one note (docs/collaboration.md, docs/sharing.md). Both
 * talk to the server directly: sharing needs it (the other person's account lives there).
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { Collaborator, UserSummary } from '../../../src/shared/api/people.js';
import {
  addCollaborator,
  createShareLink,
  removeCollaborator,
  revokeShareLink,
  searchUsers,
} from '../app/api.js';
import { initials, isMine, isShared, people, refreshPeople, setPeople } from '../app/people.js';
import { engine } from '../app/state.js';
import type { LocalNote } from '../sync/index.js';
import { ErrorAlert, Modal, messageOf, useAttempt } from './Modal.js';

/** How long a search waits after the last keystroke. */
const SEARCH_DELAY_MS = 250;

function Avatar({ name, label }: { name: string; label?: string }) {
  return (
    <span class="avatar" title={label ?? name} aria-label={label ?? name} role="img">
      {initials(name)}
    </span>
  );
}

/** A person in a list: initials, name and email, and an action named "<label> <name>". */
function PersonRow({
  person,
  action,
}: {
  person: { displayName: string; email: string };
  action?: { label: string; run: () => void };
}) {
  return (
    <li>
      <Avatar name={person.displayName} />
      <span>
        {person.displayName} <span class="muted">{person.email}</span>
      </span>
      {action && (
        <button
          type="button"
          class="text-button"
          aria-label={`${action.label} ${person.displayName}`}
          onClick={action.run}
        >
          {action.label}
        </button>
      )}
    </li>
  );
}

/** The people of a shared note, as initials (on its card and in the editor). */
export function CardPeople({ note }: { note: LocalNote }) {
  const collaborators = people.value[note.id] ?? [];
  if (!isShared(note)) return null;
  const mine = isMine(note);
  return (
    <ul class="card-people" aria-label="Shared with">
      {!mine && (
        <li>
          <Avatar name="Owner" label="Owner" />
        </li>
      )}
      {collaborators.map((collaborator) => (
        <li key={collaborator.userId}>
          <Avatar name={collaborator.displayName} />
        </li>
      ))}
    </ul>
  );
}

export function CollaboratorsDialog({ note, onClose }: { note: LocalNote; onClose: () => void }) {
  const owner = isMine(note);
  const collaborators: Collaborator[] = people.value[note.id] ?? [];
  const query = useSignal('');
  const found = useSignal<UserSummary[]>([]);
  const { error, attempt } = useAttempt();
  useEffect(() => void refreshPeople(note.id), [note.id]);
  useEffect(() => {
    const typed = query.value.trim();
    if (!typed) {
      found.value = [];
      return;
    }
    const timer = setTimeout(() => {
      searchUsers(typed).then(
        (users) => {
          if (query.value.trim() === typed) found.value = users;
        },
        (failure) => (error.value = messageOf(failure)),
      );
    }, SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [query.value]);

  const add = (user: UserSummary) =>
    attempt(async () => {
      // A note made on this device reaches the server first.
      await engine.value?.syncNow();
      setPeople(note.id, await addCollaborator(note.id, user.id));
      query.value = '';
    });
  const remove = (collaborator: Collaborator) =>
    attempt(async () => {
      await removeCollaborator(note.id, collaborator.userId);
      setPeople(
        note.id,
        collaborators.filter((other) => other.userId !== collaborator.userId),
      );
    });
  const leave = () =>
    attempt(async () => {
      await removeCollaborator(note.id, 'self');
      setPeople(note.id, []);
      onClose();
      // The server now has a tombstone for this user: the next pull drops the note here.
      await engine.value?.syncNow();
    });

  const onNote = new Set(collaborators.map((collaborator) => collaborator.userId));
  return (
    <Modal title="Collaborators" onClose={onClose}>
      <ul class="people">
        <li>
          <Avatar name={owner ? 'You' : 'Owner'} />
          <span>{owner ? 'You' : 'The owner'}</span>
          <span class="muted">Owner</span>
        </li>
        {collaborators.map((collaborator) => (
          <PersonRow
            key={collaborator.userId}
            person={collaborator}
            action={owner ? { label: 'Remove', run: () => void remove(collaborator) } : undefined}
          />
        ))}
      </ul>
      {owner ? (
        <>
          <label class="field">
            Find people
            <input
              type="search"
              placeholder="Name or email"
              value={query.value}
              onInput={(event) => (query.value = event.currentTarget.value)}
            />
          </label>
          <ul class="people" aria-label="People found">
            {found.value
              .filter((user) => !onNote.has(user.id))
              .map((user) => (
                <PersonRow key={user.id} person={user} action={{ label: 'Add', run: () => void add(user) }} />
              ))}
          </ul>
        </>
      ) : (
        <button type="button" class="text-button" onClick={() => void leave()}>
          Leave this note
        </button>
      )}
      <ErrorAlert message={error.value} />
    </Modal>
  );
}

export function ShareLinkDialog({ note, onClose }: { note: LocalNote; onClose: () => void }) {
  const url = useSignal<string | null>(null);
  const copied = useSignal(false);
  const { error, attempt } = useAttempt();
  return (
    <Modal title="Share link" onClose={onClose}>
      <p>Anyone with the link can read this note, without an account, until you revoke it.</p>
      {url.value ? (
        <>
          <label class="field">
            Public link
            <input readOnly value={url.value} onFocus={(event) => event.currentTarget.select()} />
          </label>
          <div class="row">
            <button
              type="button"
              class="text-button"
              onClick={() =>
                void attempt(async () => {
                  await navigator.clipboard.writeText(url.value ?? '');
                  copied.value = true;
                })
              }
            >
              Copy link
            </button>
            <a class="text-button" href={url.value} target="_blank" rel="noopener noreferrer">
              Open public page
            </a>
            <button
              type="button"
              class="text-button"
              onClick={() =>
                void attempt(async () => {
                  await revokeShareLink(note.id);
                  url.value = null;
                  copied.value = false;
                })
              }
            >
              Revoke link
            </button>
          </div>
          {copied.value && <p role="status">Copied</p>}
        </>
      ) : (
        <button
          type="button"
          class="primary"
          onClick={() =>
            void attempt(async () => {
              await engine.value?.syncNow();
              url.value = (await createShareLink(note.id)).url;
            })
          }
        >
          Create link
        </button>
      )}
      <ErrorAlert message={error.value} />
    </Modal>
  );
}
