import { effect, signal, useSignal } from '@preact/signals';
import { CircleUser } from 'lucide-preact';
import { useEffect, useRef } from 'preact/hooks';
import { currentUser, signOutHere } from '../app/session.js';
import { engine, navigate, showSnackbar, syncStatus } from '../app/state.js';
import { deviceExport, download } from '../app/transfer.js';
import { Confirm } from './Confirm.js';
import { IconButton } from './IconButton.js';

/** "Sign out" was asked while changes waited, and the person chose to wait for them. */
const signOutWhenSaved = signal(false);
effect(() => {
  const status = syncStatus.value;
  if (signOutWhenSaved.value && status.phase === 'idle' && status.waiting === 0) {
    signOutWhenSaved.value = false;
    void signOutHere();
  }
});

/** Who is signed in, as a line: the name, and the email when there is one. */
export function accountText(): string {
  const user = currentUser.value;
  if (!user) return '';
  const name = user.displayName || (user.isOwner ? 'Owner' : '');
  return user.email ? `${name} (${user.email})` : name;
}

/**
 * "Account" in the top bar: who is signed in, Settings and Sign out (issue 30 item 2: signing out
 * deletes the device's copy, so it is never one tap away).
 */
export function AccountMenu() {
  const open = useSignal(false);
  const asking = useSignal(false);
  const menu = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open.value) return;
    menu.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus();
    const close = (event: Event) => {
      if (!menu.current?.parentElement?.contains(event.target as Node)) open.value = false;
    };
    document.addEventListener('pointerdown', close);
    return () => document.removeEventListener('pointerdown', close);
  }, [open.value]);
  const choose = (action: () => void) => {
    open.value = false;
    action();
  };
  return (
    <div class="popover-anchor">
      <IconButton label="Account" expanded={open.value} onClick={() => (open.value = !open.value)}>
        <CircleUser size={20} />
      </IconButton>
      {open.value && (
        <div
          ref={menu}
          class="menu account-menu"
          role="menu"
          aria-label="Account"
          onKeyDown={(event) => {
            const items = [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
            const at = items.indexOf(document.activeElement as HTMLElement);
            if (event.key === 'Escape') {
              event.stopPropagation();
              open.value = false;
              menu.current?.parentElement?.querySelector<HTMLElement>('button')?.focus();
            } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
              event.preventDefault();
              items[(at + (event.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length]?.focus();
            }
          }}
        >
          <p class="menu-heading">{accountText()}</p>
          <button type="button" role="menuitem" onClick={() => choose(() => navigate({ view: 'settings' }))}>
            Settings
          </button>
          <button type="button" role="menuitem" onClick={() => choose(() => (asking.value = true))}>
            Sign out
          </button>
        </div>
      )}
      {asking.value && <SignOutDialog onClose={() => (asking.value = false)} />}
    </div>
  );
}

/** "Sign out" on the settings page: the same question first. */
export function SignOutButton() {
  const asking = useSignal(false);
  return (
    <>
      <button type="button" class="text-button" onClick={() => (asking.value = true)}>
        Sign out
      </button>
      {asking.value && <SignOutDialog onClose={() => (asking.value = false)} />}
    </>
  );
}

/**
 * Signing out deletes this device's copy: always asked, and with changes waiting it says so and
 * offers to wait for them (sign out once saved) or to export this device's notes.
 */
function SignOutDialog({ onClose }: { onClose: () => void }) {
  const waiting = syncStatus.value.waiting;
  return (
    <Confirm
      title="Sign out?"
      confirm={waiting > 0 ? 'Sign out anyway' : 'Sign out'}
      onCancel={onClose}
      onConfirm={() => {
        onClose();
        void signOutHere();
      }}
    >
      {waiting === 0 ? (
        <p>This device's copy of your notes is removed. They stay on the server.</p>
      ) : (
        <>
          <p>
            {waiting === 1 ? '1 note has changes' : `${waiting} notes have changes`} the server does not have
            yet. Signing out deletes this device's copy, and those changes with it. Wait until they are saved,
            or export this device's notes to keep them (Import reads the file back).
          </p>
          <div class="row">
            <button
              type="button"
              class="primary"
              onClick={() => {
                onClose();
                signOutWhenSaved.value = true;
                showSnackbar('You will be signed out once your changes are saved');
                void engine.value?.syncNow();
              }}
            >
              Sign out when saved
            </button>
            <button
              type="button"
              class="text-button"
              onClick={() => {
                const notes = engine.value?.notes().values() ?? [];
                download(deviceExport(notes), `notes-device-${new Date().toISOString().slice(0, 10)}.zip`);
              }}
            >
              Export this device's notes
            </button>
          </div>
        </>
      )}
    </Confirm>
  );
}
