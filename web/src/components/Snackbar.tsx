import { useEffect } from 'preact/hooks';
import { snackbar } from '../app/state.js';

/** How long a message (and its Undo) stays. */
const SHOWN_MS = 8000;

export function Snackbar() {
  const current = snackbar.value;
  useEffect(() => {
    if (!current) return;
    const timer = setTimeout(() => {
      if (snackbar.value?.id === current.id) snackbar.value = null;
    }, SHOWN_MS);
    return () => clearTimeout(timer);
  }, [current?.id]);
  return (
    <div class="snackbar-region" aria-live="polite">
      {current && (
        <div class="snackbar">
          <span>{current.message}</span>
          {current.undo && (
            <button
              type="button"
              class="text-button"
              onClick={() => {
                current.undo?.();
                snackbar.value = null;
              }}
            >
              {current.undoLabel}
            </button>
          )}
        </div>
      )}
    </div>
  );
}
