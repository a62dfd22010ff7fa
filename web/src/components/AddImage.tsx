import { ImagePlus } from 'lucide-preact';
import { useRef } from 'preact/hooks';
import { imageFiles } from '../app/media.js';
import { IconButton } from './IconButton.js';

/** "Add image": picks image files from the device. */
export function AddImageButton({ onFiles }: { onFiles: (files: File[]) => void }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <IconButton label="Add image" onClick={() => input.current?.click()}>
        <ImagePlus size={18} />
      </IconButton>
      <input
        ref={input}
        type="file"
        accept="image/*"
        multiple
        hidden
        onChange={(event) => {
          const files = [...(event.currentTarget.files ?? [])];
          event.currentTarget.value = '';
          if (files.length > 0) onFiles(files);
        }}
      />
    </>
  );
}

/** Dropping or pasting images onto the editor or the composer adds them; text pastes as before. */
export function imageDropAndPaste(onFiles: (files: File[]) => void) {
  const take = (event: DragEvent | ClipboardEvent, data: DataTransfer | null) => {
    const files = imageFiles(data);
    if (files.length === 0) return;
    event.preventDefault();
    onFiles(files);
  };
  return {
    onDragOver: (event: DragEvent) => {
      if (event.dataTransfer?.types.includes('Files')) event.preventDefault();
    },
    onDrop: (event: DragEvent) => take(event, event.dataTransfer),
    onPaste: (event: ClipboardEvent) => take(event, event.clipboardData),
  };
}
