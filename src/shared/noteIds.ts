/**
 * A note id as it is stored and sent: a UUID in lowercase hex with its four dashes, 36
 * characters. Every path that creates a note (REST, sync, MCP, import) stores only such ids
 * (src/model/noteWrites.ts refuses any other); migration 0012 gave stored notes with other ids new ones.
 * Ids become paths in an export zip and keys in the web app's database: nothing else is safe there.
 */
export const NOTE_ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

const NOTE_ID = new RegExp(NOTE_ID_PATTERN);

export const isNoteId = (value: unknown): value is string => typeof value === 'string' && NOTE_ID.test(value);
