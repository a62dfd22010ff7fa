/**
 * The field model of a note: the fields a client sets (NoteInput), their columns and defaults,
 * and the per-field history (stamp and version) that sync merges by (D-SYNC-5, D-SYNC-8).
 */

import type { NoteInput } from '../shared/api/notes.js';
import { NOTE_DEFAULTS as SHARED_NOTE_DEFAULTS } from '../shared/noteDefaults.js';
import type { NoteRow } from './notes.js';

/** The NoteInput fields that a client sets, and the columns that hold them. */
export const NOTE_FIELDS = {
  title: 'title',
  content: 'content',
  color: 'color',
  pinned: 'pinned',
  archived: 'archived',
  trashed: 'trashed',
  checklistMode: 'checklist_mode',
  sortOrder: 'sort_order',
} as const;
export type NoteField = keyof typeof NOTE_FIELDS;
export type NoteFields = Required<Omit<NoteInput, 'id' | 'reminder'>>;
export const NOTE_FIELD_NAMES = Object.keys(NOTE_FIELDS) as NoteField[];

export const NOTE_DEFAULTS: NoteFields = SHARED_NOTE_DEFAULTS; // D-NOTE-1

/** When and at which version each field last changed (D-SYNC-5, D-SYNC-8); see migration 0003. */
export interface FieldHistory {
  stampedAt: Record<NoteField, number>;
  version: Record<NoteField, number>;
}

export function fieldHistory(note: NoteRow): FieldHistory {
  const clock = JSON.parse(note.field_clock) as Partial<Record<NoteField, number>>;
  const versions = JSON.parse(note.field_versions) as Partial<Record<NoteField, number>>;
  const history: FieldHistory = {
    stampedAt: {} as FieldHistory['stampedAt'],
    version: {} as FieldHistory['version'],
  };
  for (const field of NOTE_FIELD_NAMES) {
    history.stampedAt[field] = clock[field] ?? 0;
    history.version[field] = versions[field] ?? 1;
  }
  return history;
}

/** A field clock stamp: one time for every field, or a time per field. */
export type FieldStamp = number | ((field: NoteField) => number);
export const stampOf = (stamp: FieldStamp, field: NoteField) =>
  typeof stamp === 'function' ? stamp(field) : stamp;

export function fieldValue(note: NoteRow, field: NoteField): NoteFields[NoteField] {
  const raw = note[NOTE_FIELDS[field]];
  if (field === 'title' || field === 'content' || field === 'color' || field === 'sortOrder')
    return raw as never;
  return raw === 1;
}

export function fieldValues(note: NoteRow): NoteFields {
  return Object.fromEntries(NOTE_FIELD_NAMES.map((f) => [f, fieldValue(note, f)])) as NoteFields;
}

/** The columns of a NoteRow that hold `values` (booleans as 0/1), for an update or insert. */
export function columnPatch(values: Partial<NoteFields>): Partial<NoteRow> {
  const out: Record<string, unknown> = {};
  for (const field of NOTE_FIELD_NAMES) {
    const value = values[field];
    if (value === undefined) continue;
    out[NOTE_FIELDS[field]] = typeof value === 'boolean' ? Number(value) : value;
  }
  return out as Partial<NoteRow>;
}

/** Only the NoteInput fields, so a whole Note sent back by a client is accepted (D-NOTE-2). */
export function pickNoteFields(input: NoteInput): Partial<NoteFields> {
  const out: Partial<NoteFields> = {};
  for (const field of NOTE_FIELD_NAMES) {
    if (input[field] !== undefined) (out as Record<string, unknown>)[field] = input[field];
  }
  return out;
}
