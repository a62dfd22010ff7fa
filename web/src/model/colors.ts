import { NOTE_COLORS } from '../../../src/shared/colors.js';
import type { NoteColor } from '../sync/index.js';

/** The palette's buttons, named as the accessible names ask ("Default", "Coral", …). */
export const COLORS: readonly { value: NoteColor; name: string }[] = NOTE_COLORS.map((value) => ({
  value,
  name: value[0]!.toUpperCase() + value.slice(1),
}));
