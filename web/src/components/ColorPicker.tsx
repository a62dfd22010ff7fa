import { useSignal } from '@preact/signals';
import { Palette } from 'lucide-preact';
import { COLORS } from '../model/colors.js';
import type { NoteColor } from '../sync/index.js';
import { IconButton } from './IconButton.js';

/** "Background options": the 12 colors in a popover. */
export function ColorPicker({
  value,
  onPick,
}: {
  value: NoteColor | null;
  onPick: (color: NoteColor) => void;
}) {
  const open = useSignal(false);
  return (
    <div class="popover-anchor">
      <IconButton label="Background options" expanded={open.value} onClick={() => (open.value = !open.value)}>
        <Palette size={18} />
      </IconButton>
      {open.value && (
        <fieldset
          class="palette"
          // In the open note the colours are a row of its sticky toolbar: scrolled to the end, the
          // toolbar sits below the "Edited" line instead of over it.
          ref={(element) => {
            const dialog = element?.closest('dialog');
            dialog?.scrollTo({ top: dialog.scrollHeight });
          }}
          onKeyDown={(event) => {
            if (event.key === 'Escape') {
              event.stopPropagation();
              open.value = false;
            }
          }}
        >
          <legend class="visually-hidden">Colors</legend>
          {COLORS.map((color) => (
            <button
              type="button"
              key={color.value}
              class={`swatch note-${color.value}`}
              aria-label={color.name}
              title={color.name}
              aria-pressed={value === color.value}
              onClick={(event) => {
                event.stopPropagation();
                open.value = false;
                onPick(color.value);
              }}
            />
          ))}
        </fieldset>
      )}
    </div>
  );
}
