import { useSignal } from '@preact/signals';
import { MIN_PASSWORD_LENGTH } from '../../../src/shared/api/limits.js';
import { singleSignOnUrl } from '../app/api.js';
import { signInOptions } from '../app/session.js';
import { ErrorAlert } from './Modal.js';

interface Props {
  mode: 'setup' | 'signIn';
  /** Resolves when signed in; rejects with the message to show. */
  onSubmit: (password: string, email: string) => Promise<void>;
  /** Shown above the form, e.g. why signing in is needed again. */
  notice?: string;
}

/**
 * First visit: create the owner account. Later: sign in (no email = the owner), with the
 * identity provider's button first when single sign-on is on. With PASSWORD_LOGIN=false the
 * password form is the owner's recovery only, folded away (docs/deploy.md#owner-recovery).
 */
export function AuthForm({ mode, onSubmit, notice }: Props) {
  const { passwordLogin, singleSignOn } = signInOptions.value;
  if (mode === 'setup' || !singleSignOn)
    return <PasswordForm mode={mode} onSubmit={onSubmit} notice={notice} />;
  return (
    <div class="auth-form">
      <h1>Sign in</h1>
      {notice && <p>{notice}</p>}
      <button
        type="button"
        class="primary"
        disabled={!singleSignOn.available}
        onClick={() =>
          window.location.assign(singleSignOnUrl(window.location.pathname + window.location.search))
        }
      >
        Sign in with {singleSignOn.displayName}
      </button>
      {!singleSignOn.available && (
        <p class="error" role="alert">
          {singleSignOn.displayName} cannot be reached right now. Try again in a minute.
        </p>
      )}
      {passwordLogin ? (
        <PasswordForm mode="signIn" onSubmit={onSubmit} heading="Or with a password" />
      ) : (
        <details>
          <summary>Owner recovery</summary>
          <PasswordForm mode="recovery" onSubmit={onSubmit} />
        </details>
      )}
    </div>
  );
}

function PasswordForm({
  mode,
  onSubmit,
  notice,
  heading,
}: {
  mode: 'setup' | 'signIn' | 'recovery';
  onSubmit: Props['onSubmit'];
  notice?: string;
  heading?: string;
}) {
  const error = useSignal('');
  const busy = useSignal(false);
  const setup = mode === 'setup';
  const recovery = mode === 'recovery';
  return (
    <form
      class={heading || recovery ? 'password-form' : 'auth-form'}
      onSubmit={async (event) => {
        event.preventDefault();
        const form = new FormData(event.currentTarget);
        busy.value = true;
        error.value = '';
        try {
          await onSubmit(String(form.get('password')), String(form.get('email') ?? '').trim());
        } catch (failure) {
          error.value = failure instanceof Error ? failure.message : String(failure);
        } finally {
          busy.value = false;
        }
      }}
    >
      {!recovery && (heading ? <h2>{heading}</h2> : <h1>{setup ? 'Welcome to your notes' : 'Sign in'}</h1>)}
      {notice && <p>{notice}</p>}
      {setup && <p>Create the account that owns this server. You can add more people later.</p>}
      {recovery && <p>The owner's password, for when single sign-on is down.</p>}
      {!recovery && (
        <label>
          Email
          <input
            name="email"
            type="email"
            autoComplete="username"
            placeholder={setup ? 'Optional' : 'Empty for the owner'}
          />
        </label>
      )}
      <label>
        Password
        <input
          name="password"
          type="password"
          required
          minLength={MIN_PASSWORD_LENGTH}
          autoComplete={setup ? 'new-password' : 'current-password'}
        />
      </label>
      <ErrorAlert message={error.value} />
      <button type="submit" class="primary" disabled={busy.value}>
        {setup ? 'Create account' : recovery ? 'Sign in as the owner' : 'Sign in'}
      </button>
    </form>
  );
}
