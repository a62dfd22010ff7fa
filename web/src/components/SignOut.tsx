import { useSignal } from '@preact/signals';
import { LogOut } from 'lucide-preact';
import { signOutHere } from '../app/session.js';
import { engine, syncStatus } from '../app/state.js';
import { deviceExport, download } from '../app/transfer.js';
import { IconButton } from './IconButton.js';
import { Modal } from './Modal.js';

/**
 * "Sign out": at once when everything is on the server; otherwise a dialog first, because
 * signing out deletes this device's copy, and offers this device's notes as an export.
 */
export function SignOutButton({ icon = false }: { icon?: boolean }) {
  const asking = useSignal(false);
  const start = () => {
    if (syncStatus.value.waiting > 0) asking.value = true;
    else void signOutHere();
  };
  return (
    <>
      {icon ? (
        <IconButton label="Sign out" onClick={start}>
          <LogOut size={20} />
        </IconButton>
      ) : (
        <button type="button" class="text-button" onClick={start}>
          Sign out
        </button>
      )}
      {asking.value && <SignOutDialog onClose={() => (asking.value = false)} />}
    </>
  );
}

function SignOutDialog({ onClose }: { onClose: () => void }) {
  const waiting = syncStatus.value.waiting;
  return (
    <Modal title="Sign out?" onClose={onClose}>
      <p>
        {waiting === 1 ? '1 note has changes' : `${waiting} notes have changes`} the server does not have yet.
        Signing out deletes this device's copy, and those changes with it. Export this device's notes first to
        keep them (Import reads the file back).
      </p>
      <div class="row">
        <button
          type="button"
          class="primary"
          onClick={() => {
            const notes = engine.value?.notes().values() ?? [];
            download(deviceExport(notes), `notes-device-${new Date().toISOString().slice(0, 10)}.zip`);
          }}
        >
          Export this device's notes
        </button>
        <button type="button" class="text-button" onClick={() => void signOutHere()}>
          Sign out anyway
        </button>
      </div>
    </Modal>
  );
}
