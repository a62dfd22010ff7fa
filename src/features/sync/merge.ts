import { createHash } from 'node:crypto';
import {
  type FieldHistory,
  NOTE_FIELD_NAMES,
  type NoteField,
  type NoteFields,
} from '../../model/noteFields.js';
import { MAX_TITLE_LENGTH } from '../../shared/api/limits.js';
import { mergeLines } from '../../shared/textMerge.js';

/**
 * The pure merge rules of a sync push (D-SYNC-4, D-SYNC-5, D-SYNC-8, D-SYNC-9): no database, no clock,
 * so they are unit-tested directly. The service feeds them the stored note and the change.
 */

/** The fields whose losing text is kept in a conflict copy (D-SYNC-8). */
const TEXT_FIELDS: ReadonlySet<NoteField> = new Set(['title', 'content']);

/** Indices of the changes in the order they are applied: ascending timestamp, ties in array order. */
export function applyOrder(changes: readonly { timestamp: number }[]): number[] {
  // Array.prototype.sort is stable, so equal timestamps keep their array order (D-SYNC-4).
  return changes.map((_, index) => index).sort((a, b) => changes[a]!.timestamp - changes[b]!.timestamp);
}

interface BatchChange {
  noteId: string;
  timestamp: number;
  data?: Partial<Record<NoteField, unknown>>;
}

/**
 * What the batch itself sets: for each (note, field, timestamp) the values and which change
 * sets it last. Used so that a device's own edits never count as "someone else's", and a batch
 * pushed twice changes nothing the second time.
 */
export class BatchFields {
  private readonly sets = new Map<string, { values: unknown[]; last: number }>();

  constructor(changes: readonly BatchChange[]) {
    for (const index of applyOrder(changes)) {
      const change = changes[index]!;
      for (const field of NOTE_FIELD_NAMES) {
        const value = change.data?.[field];
        if (value === undefined) continue;
        const key = BatchFields.key(change.noteId, field, change.timestamp);
        const entry = this.sets.get(key);
        if (entry) {
          entry.values.push(value);
          entry.last = index;
        } else this.sets.set(key, { values: [value], last: index });
      }
    }
  }

  private static key(noteId: string, field: NoteField, timestamp: number): string {
    return `${noteId.toLowerCase()}\u0000${field}\u0000${timestamp}`;
  }

  /** Whether this batch sets the field to this value at this timestamp (the stored value is ours). */
  wrote(noteId: string, field: NoteField, stampedAt: number, value: unknown): boolean {
    return this.sets.get(BatchFields.key(noteId, field, stampedAt))?.values.includes(value) ?? false;
  }

  /** Whether a later change of the batch sets the same field at the same timestamp (it wins the tie). */
  overriddenAtTie(index: number, noteId: string, field: NoteField, timestamp: number): boolean {
    const last = this.sets.get(BatchFields.key(noteId, field, timestamp))?.last;
    return last !== undefined && last !== index;
  }
}

/** A text that lost a conflict and must be kept in a copy. */
export interface LosingText {
  field: 'title' | 'content';
  text: string;
  /** When the losing text was written (the change's timestamp, or the stored field's stamp). */
  stampedAt: number;
}

export interface MergeDecision {
  /** The fields of the change to store. */
  accepted: Partial<NoteFields>;
  /** The field stamp each accepted field takes (D-SYNC-5). */
  stampedAt: Partial<Record<NoteField, number>>;
  /** Every field of the change was older than the stored one (reason `stale`). */
  stale: boolean;
  /** The accepted content is a three-way merge that differs from the change's (D-SYNC-9). */
  merged: boolean;
  losers: LosingText[];
}

export interface MergeInput {
  index: number;
  noteId: string;
  timestamp: number;
  /** The note version the device last saw; without it only the stale case makes a copy. */
  baseVersion?: number;
  /** The content at baseVersion, when the note changed it since and its revision is kept (D-SYNC-9). */
  baseContent?: string;
  data: Partial<NoteFields>;
  stored: NoteFields;
  history: FieldHistory;
  batch: BatchFields;
}

/**
 * The content both the stored note and the change derive from, merged line by line (D-SYNC-9),
 * or undefined when there is nothing to merge (either side kept the base, or no base is known)
 * or both sides changed the same lines differently.
 */
function mergedContent(input: MergeInput): string | undefined {
  const base = input.baseContent;
  const ours = input.stored.content;
  const theirs = input.data.content;
  if (base === undefined || theirs === undefined) return undefined;
  if (ours === base || theirs === base || ours === theirs) return undefined;
  return mergeLines(base, ours, theirs);
}

/**
 * Per-field last-writer-wins (D-SYNC-5): a field is set when its stored stamp is not newer than
 * the change. Content that both the note and the change changed since baseVersion, on different
 * lines, is merged instead, whichever is newer (D-SYNC-9); the merged text keeps the newer of
 * the two stamps, so a write older than either side still loses to it. A title or content that
 * loses, to a newer stored value (stale) or to this change while someone else had changed it
 * after baseVersion, is returned as a loser (D-SYNC-8) unless the two texts are equal, the
 * losing text is empty, or the other value came from this batch.
 */
export function mergeChange(input: MergeInput): MergeDecision {
  const { data, stored, history, batch, noteId, timestamp } = input;
  const accepted: Partial<NoteFields> = {};
  const stampedAt: MergeDecision['stampedAt'] = {};
  const losers: LosingText[] = [];
  let given = 0;
  let staleFields = 0;
  let contentMerged = false;
  for (const field of NOTE_FIELD_NAMES) {
    const value = data[field];
    if (value === undefined) continue;
    given++;
    if (batch.overriddenAtTie(input.index, noteId, field, timestamp)) continue;
    const storedAt = history.stampedAt[field];
    const merged = field === 'content' ? mergedContent(input) : undefined;
    if (merged !== undefined) {
      accepted.content = merged;
      stampedAt.content = Math.max(storedAt, timestamp);
      contentMerged = merged !== value;
      continue;
    }
    const differs = value !== stored[field];
    const keepsText =
      TEXT_FIELDS.has(field) && differs && !batch.wrote(noteId, field, storedAt, stored[field]);
    if (storedAt > timestamp) {
      staleFields++;
      if (keepsText && value !== '') {
        losers.push({ field: field as LosingText['field'], text: value as string, stampedAt: timestamp });
      }
      continue;
    }
    (accepted as Record<string, unknown>)[field] = value;
    stampedAt[field] = timestamp;
    const changedSinceBase = input.baseVersion !== undefined && history.version[field] > input.baseVersion;
    if (keepsText && changedSinceBase && stored[field] !== '') {
      losers.push({
        field: field as LosingText['field'],
        text: stored[field] as string,
        stampedAt: storedAt,
      });
    }
  }
  return {
    accepted,
    stampedAt,
    stale: given > 0 && staleFields === given,
    merged: contentMerged,
    losers,
  };
}

/** Fixed namespace of this service's name-based ids (a random v4 uuid, chosen once). */
const CONFLICT_NAMESPACE = '8f0d7a52-3c1e-4b8a-9d4f-6a2e5b7c9e10';

/**
 * A name-based (version 5, SHA-1) uuid of the note, the field and the change's timestamp, so
 * that pushing the same change again finds the copy it made the first time (D-SYNC-8).
 */
export function conflictCopyId(noteId: string, field: string, timestamp: number): string {
  const hash = createHash('sha1')
    .update(Buffer.from(CONFLICT_NAMESPACE.replaceAll('-', ''), 'hex'))
    .update(`${noteId.toLowerCase()}/${field}/${timestamp}`)
    .digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Title and content of a conflict copy: "<title> (conflict <ISO date>)" (D-SYNC-8). The title is
 * cut to keep within the title limit (D-ERR-5); a losing title that had to be cut is kept whole
 * as the first line of the content, so no text is lost.
 */
export function conflictCopyText(
  loser: { title: string; content: string; titleLost: boolean },
  stampedAt: number,
): { title: string; content: string } {
  const suffix = ` (conflict ${new Date(stampedAt).toISOString()})`;
  const room = MAX_TITLE_LENGTH - suffix.length;
  if (loser.title.length <= room) return { title: loser.title + suffix, content: loser.content };
  return {
    title: `${loser.title.slice(0, room - 1)}…${suffix}`,
    content: loser.titleLost ? `${loser.title}\n\n${loser.content}` : loser.content,
  };
}
