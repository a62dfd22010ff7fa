import { useSignal } from '@preact/signals';
import { MIN_PASSWORD_LENGTH } from '../../../src/shared/api/limits.js';

interface Props {
  mode: 'setup' | 'signIn';
  /** Resolves when signed in; rejects with the message to show. */
  onSubmit: (password: string, email: string) => Promise<void>;
  /** Shown above the form, e.g. why signing in is needed again. */
  notice?: string;
}

/** First visit: create the owner account. Later: sign in (no email = the owner). */
export function AuthForm({ mode, onSubmit, notice }: Props) {
  const error = useSignal('');
  const busy = useSignal(false);
  const setup = mode === 'setup';
  return (
    <form
      class="auth-form"
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
      <h1>{setup ? 'Welcome to your notes' : 'Sign in'}</h1>
      {notice && <p>{notice}</p>}
      {setup && <p>Create the account that owns this server. You can add more people later.</p>}
      <label>
        Email
        <input
          name="email"
          type="email"
          autoComplete="username"
          placeholder={setup ? 'Optional' : 'Empty for the owner'}
        />
      </label>
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
      {error.value && (
        <p class="error" role="alert">
          {error.value}
        </p>
      )}
      <button type="submit" class="primary" disabled={busy.value}>
        {setup ? 'Create account' : 'Sign in'}
      </button>
    </form>
  );
}
