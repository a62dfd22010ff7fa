/** The 12 note colors (Keep's 2023 names), shared by the API's schemas and the web app. */
export const NOTE_COLORS = [
  'default',
  'coral',
  'peach',
  'sand',
  'mint',
  'sage',
  'fog',
  'storm',
  'dusk',
  'blossom',
  'clay',
  'chalk',
] as const;
export type NoteColor = (typeof NOTE_COLORS)[number];
