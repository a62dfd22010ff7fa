/** Settings: account (password, sign out), import and export, API keys with MCP configuration. */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { ApiKey, CreatedApiKey } from '../../../src/shared/api/apiKeys.js';
import type { ImportSummary } from '../../../src/shared/api/transfer.js';
import { changePassword, createApiKey, fetchApiKeys, revokeApiKey } from '../app/api.js';
import { currentUser } from '../app/session.js';
import { engine } from '../app/state.js';
import { uploadImport } from '../app/transfer.js';
import { mcpConfigs } from '../model/mcpConfig.js';
import { ErrorAlert, messageOf, NewPasswordField, useAttempt } from './Modal.js';
import { accountText, SignOutButton } from './SignOut.js';

export function SettingsPage() {
  return (
    <div class="page">
      <h1>Settings</h1>
      <Account />
      <MovingInAndOut />
      <ApiKeys />
    </div>
  );
}

function Account() {
  const message = useSignal<{ text: string; error: boolean } | null>(null);
  return (
    <section aria-labelledby="account-heading">
      <h2 id="account-heading">Account</h2>
      {currentUser.value && <p>Signed in as {accountText()}</p>}
      <form
        class="stack"
        onSubmit={async (event) => {
          event.preventDefault();
          const form = event.currentTarget;
          const data = new FormData(form);
          try {
            await changePassword(String(data.get('current')), String(data.get('new')));
            form.reset();
            message.value = {
              text: 'Password changed. Your other devices must sign in again.',
              error: false,
            };
          } catch (failure) {
            message.value = { text: messageOf(failure), error: true };
          }
        }}
      >
        <h3>Change password</h3>
        <label class="field">
          Current password
          <input name="current" type="password" required autoComplete="current-password" />
        </label>
        <NewPasswordField label="New password" name="new" />
        <button type="submit" class="primary">
          Change password
        </button>
        {message.value && (
          <p class={message.value.error ? 'error' : ''} role={message.value.error ? 'alert' : 'status'}>
            {message.value.text}
          </p>
        )}
      </form>
      <SignOutButton />
    </section>
  );
}

function MovingInAndOut() {
  const progress = useSignal<number | null>(null);
  const summary = useSignal<ImportSummary | null>(null);
  const { error, attempt } = useAttempt();
  const start = async (file: File) => {
    summary.value = null;
    progress.value = 0;
    await attempt(async () => {
      summary.value = await uploadImport(file, (fraction) => (progress.value = fraction));
      // The imported notes come to this device with the next pull.
      await engine.value?.syncNow();
    });
    progress.value = null;
  };
  return (
    <section aria-labelledby="transfer-heading">
      <h2 id="transfer-heading">Import and export</h2>
      <p>
        Import a Google Keep Takeout zip (Google Takeout → Keep) or an export of this app. Notes imported
        before are not imported twice.
      </p>
      <label class="file-button">
        Import
        <input
          type="file"
          accept=".zip,application/zip"
          onChange={(event) => {
            const file = event.currentTarget.files?.[0];
            event.currentTarget.value = '';
            if (file) void start(file);
          }}
        />
      </label>
      {progress.value !== null && (
        <label class="field">
          {progress.value < 1 ? 'Uploading' : 'Importing on the server'}
          <progress max={1} value={progress.value < 1 ? progress.value : undefined} />
        </label>
      )}
      {summary.value && <ImportResult summary={summary.value} />}
      <ErrorAlert message={error.value} />
      <p>
        <a class="text-button" href="/api/export" download>
          Export
        </a>{' '}
        all your own notes as Markdown files with their images, and a notes.json that Import reads back.
      </p>
    </section>
  );
}

/** "1 image", "2 images". */
function counted(count: number, thing: string): string {
  return `${count} ${thing}${count === 1 ? '' : 's'}`;
}

function ImportResult({ summary }: { summary: ImportSummary }) {
  return (
    <div role="status" class="import-summary">
      <p>
        Imported {counted(summary.imported, 'note')} with {counted(summary.attachments, 'image')};{' '}
        {summary.alreadyThere} {summary.alreadyThere === 1 ? 'was' : 'were'} already there.
      </p>
      {summary.unreadable.length > 0 && (
        <details open>
          <summary>Skipped ({summary.unreadable.length})</summary>
          <ul>
            {summary.unreadable.map((skipped) => (
              <li key={skipped.source}>
                {skipped.source}: {skipped.reason}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}

function ApiKeys() {
  const keys = useSignal<ApiKey[]>([]);
  const created = useSignal<CreatedApiKey | null>(null);
  const { error, attempt } = useAttempt();
  const copied = useSignal('');
  const reload = () =>
    fetchApiKeys().then(
      (list) => (keys.value = list),
      (failure) => (error.value = messageOf(failure)),
    );
  useEffect(() => void reload(), []);
  const copy = async (label: string, text: string) => {
    await navigator.clipboard.writeText(text);
    copied.value = label;
  };
  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      <p>A key lets a program or an AI assistant (MCP) act as you. Keys cannot manage keys.</p>
      <form
        class="stack"
        onSubmit={(event) => {
          event.preventDefault();
          const form = event.currentTarget;
          const data = new FormData(form);
          void attempt(async () => {
            created.value = await createApiKey(String(data.get('name')), data.get('readOnly') === 'on');
            form.reset();
            await reload();
          });
        }}
      >
        <label class="field">
          Key name
          <input name="name" required maxLength={100} placeholder="e.g. Claude Desktop" />
        </label>
        <label class="check">
          <input name="readOnly" type="checkbox" /> Read-only (can search and read, never change)
        </label>
        <button type="submit" class="primary">
          Create key
        </button>
      </form>
      <ErrorAlert message={error.value} />
      {created.value && (
        <div class="new-key">
          <p>
            <strong>Copy the key now:</strong> it is shown only once.
          </p>
          <label class="field">
            New key
            <input readOnly value={created.value.key} onFocus={(event) => event.currentTarget.select()} />
          </label>
          <button type="button" class="text-button" onClick={() => void copy('key', created.value!.key)}>
            Copy key
          </button>
        </div>
      )}
      <ul class="keys" aria-label="Your API keys">
        {keys.value.map((key) => (
          <li key={key.id}>
            <span>
              <strong>{key.name}</strong> <code>{key.keyPrefix}…</code>{' '}
              {key.scopes.includes('notes:write') ? 'read and write' : 'read-only'}
            </span>
            <span class="muted">
              Created {new Date(key.createdAt).toLocaleDateString()}; last used{' '}
              {key.lastUsedAt ? new Date(key.lastUsedAt).toLocaleString() : 'never'}
            </span>
            <button
              type="button"
              class="text-button"
              aria-label={`Revoke ${key.name}`}
              onClick={async () => {
                try {
                  await revokeApiKey(key.id);
                  if (created.value?.id === key.id) created.value = null;
                  await reload();
                } catch (failure) {
                  error.value = messageOf(failure);
                }
              }}
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
      <h3>Connect an AI assistant (MCP)</h3>
      {mcpConfigs(location.origin, created.value?.key ?? 'nsk_…').map((config) => (
        <div class="mcp-config" key={config.client}>
          <h4>{config.client}</h4>
          <p>{config.where}</p>
          <pre>{config.text}</pre>
          <button type="button" class="text-button" onClick={() => void copy(config.client, config.text)}>
            Copy {config.client} configuration
          </button>
        </div>
      ))}
      {copied.value && <p role="status">Copied</p>}
    </section>
  );
}
