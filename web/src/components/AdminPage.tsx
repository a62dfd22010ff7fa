/** The owner's user administration (docs/collaboration.md "Users"): add and remove people. */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { UserProfile } from '../../../src/shared/api/people.js';
import { createUser, deleteUser, fetchUsers } from '../app/api.js';
import { ErrorAlert, Modal, messageOf, NewPasswordField, useAttempt } from './Modal.js';

export function AdminPage() {
  const users = useSignal<UserProfile[]>([]);
  const { error, attempt } = useAttempt();
  const removing = useSignal<UserProfile | null>(null);
  const reload = () =>
    fetchUsers().then(
      (list) => (users.value = list),
      (failure) => (error.value = messageOf(failure)),
    );
  useEffect(() => void reload(), []);
  return (
    <div class="page">
      <h1>Users</h1>
      <p>Only you, the owner, can add people. There is no sign-up: give them their email and password.</p>
      <form
        class="stack"
        onSubmit={(event) => {
          event.preventDefault();
          const form = event.currentTarget;
          const data = new FormData(form);
          void attempt(async () => {
            await createUser({
              email: String(data.get('email')).trim(),
              displayName: String(data.get('displayName')).trim(),
              password: String(data.get('password')),
            });
            form.reset();
            await reload();
          });
        }}
      >
        <h2>Add a user</h2>
        <label class="field">
          Name
          <input name="displayName" required maxLength={100} autoComplete="off" />
        </label>
        <label class="field">
          Email
          <input name="email" type="email" required maxLength={254} autoComplete="off" />
        </label>
        <NewPasswordField label="Password" name="password" />
        <button type="submit" class="primary">
          Add user
        </button>
      </form>
      <ErrorAlert message={error.value} />
      <h2>Everyone</h2>
      <ul class="people" aria-label="Users">
        {users.value.map((user) => (
          <li key={user.id}>
            <span>
              {user.displayName} <span class="muted">{user.email}</span>
            </span>
            {user.isOwner ? (
              <span class="muted">Owner</span>
            ) : (
              <button
                type="button"
                class="text-button"
                aria-label={`Remove ${user.displayName}`}
                onClick={() => (removing.value = user)}
              >
                Remove
              </button>
            )}
          </li>
        ))}
      </ul>
      {removing.value && (
        <Modal title={`Remove ${removing.value.displayName}?`} onClose={() => (removing.value = null)}>
          <p>This cannot be undone. Removing {removing.value.email} deletes, at once:</p>
          <ul>
            <li>
              their notes, with their images and public share links, also for the people they shared them
              with;
            </li>
            <li>their access to notes others shared with them (those notes stay with their owners);</li>
            <li>their sessions on every device and their API keys, so their assistants stop working.</li>
          </ul>
          <p>Their email address can be used for a new account afterwards.</p>
          <button
            type="button"
            class="danger"
            onClick={async () => {
              const user = removing.value;
              removing.value = null;
              if (!user) return;
              try {
                await deleteUser(user.id);
                await reload();
              } catch (failure) {
                error.value = messageOf(failure);
              }
            }}
          >
            Remove user
          </button>
        </Modal>
      )}
    </div>
  );
}
