import { sql } from 'kysely';
import { inJsonList, joiningAggregate, jsonListRows } from '../db/dialect.js';
import { fastStatement } from '../db/fastPath.js';
import type { Db } from '../db/types.js';
import { visibleTo } from './visibility.js';

/**
 * Names of the tags carried by at least one visible, not trashed note of the user, sorted
 * (D-TAG-2). Read from the user's notes (visibleTo) to their tags, so the cost follows the
 * user's notes: testing every tag row for a visible note of it took 1.9 s for a user with 25,000
 * notes (tag rows are shared by all users), this way 50 ms, and nothing for a user without notes.
 */
export async function visibleTagNames(db: Db, userId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('notes as n')
    .innerJoin('note_tags as nt', 'nt.note_id', 'n.id')
    .innerJoin('tags as t', 't.id', 'nt.tag_id')
    .select('t.name')
    .distinct()
    .where('n.trashed', '=', 0)
    .where(visibleTo(userId))
    .orderBy('t.name')
    .execute();
  return rows.map((row) => row.name);
}

/** Joins a note's tag names into one string; hashtags cannot contain it (D-TAG-1). */
const TAG_SEPARATOR = '\u001f';

/**
 * Tag names per note, sorted, for many notes in one query: one row per note rather than per tag,
 * which halves the rows a 10,000-note pull reads.
 */
export async function tagsByNote(db: Db, noteIds: readonly string[]): Promise<Map<string, string[]>> {
  const byNote = new Map<string, string[]>();
  if (noteIds.length === 0) return byNote;
  const rows = await db
    .selectFrom('note_tags as nt')
    .innerJoin('tags as t', 't.id', 'nt.tag_id')
    .select((eb) => [
      'nt.note_id',
      eb.fn
        .agg<string>(joiningAggregate(), ['t.name', sql.lit(TAG_SEPARATOR)])
        .orderBy('t.name')
        .as('names'),
    ])
    .where('nt.note_id', 'in', inJsonList(noteIds))
    .groupBy('nt.note_id')
    .execute();
  for (const row of rows) byNote.set(row.note_id, row.names.split(TAG_SEPARATOR));
  return byNote;
}

/**
 * Replaces a note's tags, creating new tag rows and dropping tags no note uses any more (D-TAG-2).
 * Only the difference is written: an edit that keeps the hashtags costs one query.
 */
export async function replaceNoteTags(db: Db, noteId: string, names: readonly string[]): Promise<void> {
  const current = await db
    .selectFrom('note_tags as nt')
    .innerJoin('tags as t', 't.id', 'nt.tag_id')
    .select(['t.id', 't.name'])
    .where('nt.note_id', '=', noteId)
    .execute();
  const wanted = new Set(names);
  const dropped = current.filter((t) => !wanted.has(t.name)).map((t) => t.id);
  const kept = new Set(current.map((t) => t.name));
  const added = [...wanted].filter((name) => !kept.has(name));
  if (dropped.length > 0) {
    await db
      .deleteFrom('note_tags')
      .where('note_id', '=', noteId)
      .where('tag_id', 'in', inJsonList(dropped))
      .execute();
    await deleteUnusedTags(db, dropped);
  }
  await addNoteTags(db, noteId, added);
}

/**
 * Tags a note with names it does not have yet, creating the tag rows that do not exist. The
 * names are one bound parameter, so no number of them reaches SQLite's variable limit.
 */
export async function addNoteTags(db: Db, noteId: string, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const list = JSON.stringify(names);
  if (newTagsStatement.run(db, list)) {
    noteTagsStatement.run(db, noteId, list);
    return;
  }
  // `WHERE true`: without it SQLite reads ON CONFLICT as the join constraint of the SELECT.
  await sql`INSERT INTO tags (name) ${jsonListRows(names)} WHERE true ON CONFLICT (name) DO NOTHING`.execute(
    db,
  );
  await db
    .insertInto('note_tags')
    .columns(['note_id', 'tag_id'])
    .expression((eb) =>
      eb
        .selectFrom('tags')
        .select([sql<string>`${noteId}`.as('note_id'), 'id'])
        .where('name', 'in', inJsonList(names)),
    )
    .execute();
}

/** addNoteTags' statements on SQLite's fast path (db/fastPath.ts): the SQL Kysely makes of them. */
const newTagsStatement = fastStatement<[names: string], never>(
  'INSERT INTO tags (name) SELECT value FROM json_each(?) WHERE true ON CONFLICT (name) DO NOTHING',
);
const noteTagsStatement = fastStatement<[noteId: string, names: string], never>(
  'INSERT INTO note_tags (note_id, tag_id) SELECT ?, id FROM tags WHERE name IN (SELECT value FROM json_each(?))',
);

/** The ids of the tags the notes carry, read before the notes are deleted (deleteUnusedTags after). */
export async function tagIdsOfNotes(db: Db, noteIds: readonly string[]): Promise<number[]> {
  const rows = await db
    .selectFrom('note_tags')
    .select('tag_id')
    .distinct()
    .where('note_id', 'in', inJsonList(noteIds))
    .execute();
  return rows.map((row) => row.tag_id);
}

export async function deleteUnusedTags(db: Db, tagIds: readonly number[]): Promise<void> {
  if (tagIds.length === 0) return;
  await db
    .deleteFrom('tags')
    .where('id', 'in', inJsonList(tagIds))
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('note_tags').select('tag_id').whereRef('tag_id', '=', 'tags.id'))),
    )
    .execute();
}
