import { useSignal } from '@preact/signals';
import { authenticate, removeEndedAccount } from '../app/session.js';
import { AuthForm } from './AuthScreen.js';
import { Confirm } from './Confirm.js';

interface Props {
  userId: string;
  name: string;
  /** Notes with changes only this device holds. */
  waiting: number;
}

function unsyncedText(waiting: number): string {
  return waiting === 1 ? 'Changes to 1 note have' : `Changes to ${waiting} notes have`;
}

/**
 * The server ended the session (expiry, sign-out elsewhere, a new password): nothing of the
 * person's notes shows until they sign in again (docs/webapp.md "Shared computers"); someone else
 * may sign in here instead, or remove that account's data from the browser.
 */
export function SessionEnded({ userId, name, waiting }: Props) {
  const removing = useSignal(false);
  const whose = name ? `${name}'s` : 'Your';
  return (
    <main class="auth">
      <div class="auth-form">
        <AuthForm
          mode="signIn"
          notice={`${whose} session on this device has ended. Sign in again to see the notes.${
            waiting > 0
              ? ` ${unsyncedText(waiting)} not reached the server yet: they sync after sign-in.`
              : ''
          }`}
          onSubmit={(password, email) => authenticate('signIn', password, email)}
        />
        <button type="button" class="text-button" onClick={() => (removing.value = true)}>
          Remove this account's data from this device
        </button>
      </div>
      {removing.value && (
        <Confirm
          title="Remove this account's data?"
          confirm="Remove"
          onConfirm={() => void removeEndedAccount(userId)}
          onCancel={() => (removing.value = false)}
        >
          <p>
            The notes stay on the server; this browser forgets them.
            {waiting > 0 && ` ${unsyncedText(waiting)} not reached the server and will be lost.`}
          </p>
        </Confirm>
      )}
    </main>
  );
}
