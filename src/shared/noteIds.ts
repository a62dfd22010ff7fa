import { v7 } from 'uuid';

/**
 * A note id as it is stored and sent: a UUID in lowercase hex with its four dashes, 36
 * characters. Every path that creates a note (REST, sync, MCP, import) stores only such ids
 * (src/model/noteWrites.ts refuses any other); migration 0012 gave stored notes with other ids new ones.
 * Ids become paths in an export zip and keys in the web app's database: nothing else is safe there.
 */
export const NOTE_ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

const NOTE_ID = new RegExp(NOTE_ID_PATTERN);

export const isNoteId = (value: unknown): value is string => typeof value === 'string' && NOTE_ID.test(value);

/**
 * A new note's id, wherever a note is made (the server, the web app offline): a UUID version 7,
 * whose first 48 bits are the time it was made. Notes are found by id through B-tree indexes
 * (notes.id, the key of note_revisions and its age index). Ids that grow with time are added at
 * an index's end, where the page is already in memory and one WAL frame takes many creates;
 * random (version 4) ids each land on a random page: ~10% more CPU a create on a server with
 * 30,000 notes (docs/benchmarks.md, "Issue 31: idle memory, time-ordered note ids"). Any UUID
 * a client sends is still taken (D-NOTE-1); the time in the id is the note's createdAt, which
 * it shows anyway (docs/decisions/0047-time-ordered-note-ids.md).
 */
export const newNoteId = (): string => v7();
