import { useEffect, useRef } from 'preact/hooks';
import { helpOpen, SHORTCUTS } from '../app/shortcuts.js';

export function ShortcutsHelp() {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (helpOpen.value) dialog.current?.showModal();
  }, [helpOpen.value]);
  if (!helpOpen.value) return null;
  return (
    <dialog
      ref={dialog}
      class="help"
      aria-label="Keyboard shortcuts"
      onClose={() => (helpOpen.value = false)}
    >
      <h2>Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map(([keys, what]) => (
          <div key={keys}>
            <dt>
              <kbd>{keys}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <button type="button" class="text-button" onClick={() => dialog.current?.close()}>
        Close
      </button>
    </dialog>
  );
}
