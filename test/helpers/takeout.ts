/**
 * Google Keep Takeout archives as Takeout makes them (docs/backup.md "From Google Keep"): a
 * `Takeout/Keep/` folder with one JSON file per note (and its HTML twin), the attachments beside
 * them, `Labels.txt`, and `Takeout/archive_browser.html`. Field names from Keep's export.
 */
import { image, zipOf } from './archives.js';

export interface KeepNote {
  title?: string;
  textContent?: string;
  listContent?: { text: string; isChecked: boolean; isIndented?: boolean; superListItemId?: string }[];
  color?: string;
  isPinned?: boolean;
  isArchived?: boolean;
  isTrashed?: boolean;
  labels?: { name: string }[];
  attachments?: { filePath: string; mimetype: string }[];
  createdTimestampUsec?: number;
  userEditedTimestampUsec?: number;
}

/** An ISO time as Keep's microsecond timestamps. */
export const usec = (iso: string) => Date.parse(iso) * 1000;

const KEEP_DEFAULTS = { color: 'DEFAULT', isTrashed: false, isPinned: false, isArchived: false };

/**
 * The zip of these notes (file name without `.json` → note; a string is written as it is, e.g.
 * broken JSON) and other files of the Keep folder (attachments), by name.
 */
export function keepTakeout(
  notes: Record<string, KeepNote | string>,
  files: Record<string, Buffer | string> = {},
): Promise<Buffer> {
  const entries: Record<string, Buffer | string> = {
    'Takeout/archive_browser.html': '<html></html>',
    'Takeout/Keep/Labels.txt': [...labelsOf(Object.values(notes))].join('\n'),
  };
  for (const [name, note] of Object.entries(notes)) {
    entries[`Takeout/Keep/${name}.json`] =
      typeof note === 'string' ? note : JSON.stringify({ ...KEEP_DEFAULTS, ...note });
    entries[`Takeout/Keep/${name}.html`] = '<html>the same note as HTML</html>';
  }
  for (const [name, data] of Object.entries(files)) entries[`Takeout/Keep/${name}`] = data;
  return zipOf(entries);
}

function labelsOf(notes: (KeepNote | string)[]): Set<string> {
  const names = new Set<string>();
  for (const note of notes) {
    if (typeof note !== 'string') for (const label of note.labels ?? []) names.add(label.name);
  }
  return names;
}

/** Keep's color names → ours (docs/backup.md); anything else becomes default. */
const KEEP_COLORS: Record<string, string> = {
  DEFAULT: 'default',
  RED: 'coral',
  ORANGE: 'peach',
  YELLOW: 'sand',
  GREEN: 'mint',
  TEAL: 'sage',
  BLUE: 'fog',
  CERULEAN: 'storm',
  PURPLE: 'dusk',
  PINK: 'blossom',
  BROWN: 'clay',
  GRAY: 'chalk',
};

/** A note as the API shows it after import, the fields the fixture decides. */
export interface ExpectedNote {
  title: string;
  content: string;
  color: string;
  pinned: boolean;
  archived: boolean;
  trashed: boolean;
  checklistMode: boolean;
  attachments: number;
}

/** What docs/backup.md says a Keep note becomes (labels here are single words: `#Word`). */
export function expectedNote(note: KeepNote): ExpectedNote {
  const body = note.listContent
    ? note.listContent.map((item) => `- [${item.isChecked ? 'x' : ' '}] ${item.text}`).join('\n')
    : (note.textContent ?? '');
  const tags = (note.labels ?? []).map((label) => `#${label.name}`).join(' ');
  return {
    title: note.title ?? '',
    content: tags ? `${body}\n\n${tags}` : body,
    color: KEEP_COLORS[note.color ?? 'DEFAULT'] ?? 'default',
    pinned: note.isPinned ?? false,
    archived: note.isArchived ?? false,
    trashed: note.isTrashed ?? false,
    checklistMode: Boolean(note.listContent),
    attachments: (note.attachments ?? []).filter((file) => file.mimetype.startsWith('image/')).length,
  };
}

/**
 * The web app's import fixture (issue 14): 2,000 plain notes with every Keep color and unknown
 * ones, plus the odd cases: an empty note, a checklist with a label, a note with an image and a
 * voice recording (not an image: skipped, the note kept), pinned, archived and trashed notes,
 * and a file that is not JSON. `expected` is what the import must produce; `skipped` counts
 * what its summary must list.
 */
export async function webImportFixture() {
  const colors = [...Object.keys(KEEP_COLORS), 'MAGENTA', 'NEON'];
  const notes: Record<string, KeepNote | string> = {};
  for (let index = 0; index < 2000; index++) {
    notes[`Note ${index}`] = {
      title: `Keep note ${index}`,
      textContent: `Text of note ${index}`,
      color: colors[index % colors.length],
      isPinned: index % 500 === 1,
      isArchived: index % 500 === 2,
      isTrashed: index % 500 === 3,
      createdTimestampUsec: usec('2020-01-01T00:00:00.000Z') + index * 1_000_000,
      userEditedTimestampUsec: usec('2021-01-01T00:00:00.000Z'),
    };
  }
  notes.Empty = { title: '', textContent: '' };
  notes.Groceries = {
    title: 'Groceries',
    listContent: [
      { text: 'Milk', isChecked: false },
      { text: 'Bread', isChecked: true },
    ],
    color: 'GREEN',
    labels: [{ name: 'Home' }],
  };
  notes['2019-05-01T10_00_00.000+02_00'] = {
    title: 'Trip',
    textContent: 'Lisbon, then Porto',
    attachments: [
      { filePath: '1a2b3c.png', mimetype: 'image/png' },
      { filePath: '9f8e7d.3gp', mimetype: 'audio/3gpp' },
    ],
  };
  notes.Broken = '{"title": "cut off';
  const archive = await keepTakeout(notes, { '1a2b3c.png': await image(3), '9f8e7d.3gp': 'not an image' });
  const expected = Object.values(notes)
    .filter((note): note is KeepNote => typeof note !== 'string')
    .map(expectedNote);
  return { archive, expected, skipped: 2 };
}
