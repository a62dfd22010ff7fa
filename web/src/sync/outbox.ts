import { extractHashtags } from '../../../src/shared/hashtags.js';
import { NOTE_DEFAULTS } from '../../../src/shared/noteDefaults.js';
import { mergeLines } from '../../../src/shared/textMerge.js';
import type { LocalNote, NoteFields, ServerNote, SyncChange, SyncResult } from './types.js';

/**
 * The pure rules of the outbox (docs/sync.md "What to store on the device", the client rule of
 * D-SYNC-7, the merge of D-SYNC-9): no database, no network, no clock. The engine reads one
 * note's state in an IndexedDB transaction, runs these, and writes back what changed. Entries are
 * never mutated: a changed entry is a new object, so the store writes exactly the new ones.
 */

export type TextField = 'title' | 'content';
export const TEXT_FIELDS: readonly TextField[] = ['title', 'content'];

/** The version a text edit was based on and the text the person saw at that version. */
export interface TextBase {
  version: number;
  text: string;
}

export interface OutboxEntry {
  /** IndexedDB key (auto-increment): the order the changes were made in. */
  seq?: number;
  noteId: string;
  operation: 'create' | 'update' | 'delete';
  /** The latest edit merged into this entry (Unix ms, the device's clock at the edit). */
  timestamp: number;
  data: NoteFields;
  /** For each text field in `data`: what the edit was based on (its `baseVersion`). */
  bases: Partial<Record<TextField, TextBase>>;
  /**
   * A text merged on the device with a newer server text is stamped when it was merged, not
   * when first typed: it holds that newer text, so it must not lose to it as older (D-SYNC-5).
   */
  mergedAt?: Partial<Record<TextField, number>>;
  /**
   * Sent at least once: from then on it is resent unchanged (same timestamp) until answered,
   * and edits go into a new pending entry. At most one pending entry per note.
   */
  inflight: boolean;
  /**
   * Refused by the server as invalid (400, D-SYNC-4): kept on the device (and shown), never sent
   * again as is. The next edit of the note makes a new pending entry, which is sent.
   */
  rejected?: string;
}

/** The other fields the server acknowledged at `version` (colour, pin, …). */
export interface AckedFields {
  version: number;
  data: NoteFields;
}

/**
 * What the server acknowledged since the last pull of the note: texts are the base of the next
 * edits; texts and fields are shown over the older server copy until a pull brings their version.
 */
export interface NoteAcks {
  noteId: string;
  title?: TextBase;
  content?: TextBase;
  fields?: AckedFields;
}

/** Everything the device holds about one note. */
export interface NoteState {
  server?: ServerNote;
  /** In `seq` order. */
  entries: OutboxEntry[];
  acks?: NoteAcks;
}

export type Edit = { kind: 'create' | 'update'; fields: NoteFields } | { kind: 'delete' };

/** A create's text is based on "no note yet": the ack of the create moves it to version ≥ 1. */
const NO_NOTE: TextBase = { version: 0, text: '' };

function isTextField(field: string): field is TextField {
  return field === 'title' || field === 'content';
}

/**
 * The base of a new edit of a text field (docs/sync.md "baseVersion"): the oldest
 * unacknowledged change of that field, else its last acknowledgement if newer than the server
 * copy, else the server copy.
 */
export function baseFor(state: NoteState, field: TextField): TextBase {
  const unacknowledged = state.entries.find((entry) => entry.bases[field]);
  if (unacknowledged) return unacknowledged.bases[field]!;
  const ack = state.acks?.[field];
  const server = state.server;
  if (ack && (!server || ack.version >= server.version)) return ack;
  return server ? { version: server.version, text: server[field] } : NO_NOTE;
}

/**
 * The entries after an edit: fields merge into the one pending entry (fields overwrite, the
 * timestamp becomes the edit's, each text field keeps the base of its first pending edit), or a
 * new pending entry follows the inflight ones. A delete replaces the pending entry; a note that
 * never reached the server simply loses its entries.
 */
export function applyEdit(noteId: string, state: NoteState, edit: Edit, timestamp: number): OutboxEntry[] {
  const inflight = state.entries.filter((entry) => entry.inflight);
  const pending = state.entries.find((entry) => !entry.inflight);
  if (edit.kind === 'delete') {
    if (!state.server && inflight.length === 0) return [];
    return [...inflight, { noteId, operation: 'delete', timestamp, data: {}, bases: {}, inflight: false }];
  }
  if (pending?.operation === 'delete') return state.entries;
  const bases = { ...pending?.bases };
  for (const field of Object.keys(edit.fields)) {
    if (isTextField(field) && !bases[field])
      bases[field] = edit.kind === 'create' ? NO_NOTE : baseFor(state, field);
  }
  const operation = pending?.operation ?? (edit.kind === 'create' && !state.server ? 'create' : 'update');
  const data = { ...pending?.data, ...edit.fields };
  const entry: OutboxEntry = { noteId, operation, timestamp, data, bases, inflight: false };
  // A field typed again takes this edit's stamp; a merged field nobody retyped keeps its own.
  const mergedAt = Object.entries(pending?.mergedAt ?? {}).filter(([field]) => !(field in edit.fields));
  if (mergedAt.length > 0) entry.mergedAt = Object.fromEntries(mergedAt);
  return [...inflight, entry];
}

/** A change to send and the entry it comes from. */
export interface OutgoingChange {
  entry: OutboxEntry;
  change: SyncChange;
}

/**
 * The protocol changes of one entry. Title and content based on different versions (or stamped
 * differently, after a merge on the device) go as separate changes with their own `baseVersion`
 * and `timestamp`, so neither is pushed on a base older than what the person saw. Fields other
 * than texts go with the entry's timestamp: with a text of that stamp, else on their own.
 */
export function changesOf(entry: OutboxEntry): SyncChange[] {
  const { noteId, operation, timestamp, data } = entry;
  if (operation === 'delete') return [{ noteId, operation, timestamp }];
  if (operation === 'create') return [{ noteId, operation, timestamp, data }];
  const groups = new Map<string, SyncChange>();
  const group = (stamp: number, baseVersion?: number) => {
    const key = `${stamp}/${baseVersion}`;
    let change = groups.get(key);
    if (!change) {
      change = {
        noteId,
        operation,
        timestamp: stamp,
        ...(baseVersion === undefined ? {} : { baseVersion }),
        data: {},
      };
      groups.set(key, change);
    }
    return change.data!;
  };
  for (const field of ['content', 'title'] as const) {
    const base = entry.bases[field];
    if (data[field] !== undefined && base)
      group(entry.mergedAt?.[field] ?? timestamp, base.version)[field] = data[field];
  }
  const others = Object.entries(data).filter(([field]) => !isTextField(field));
  if (others.length > 0) {
    const sameStamp = [...groups.values()].find((change) => change.timestamp === timestamp);
    Object.assign(sameStamp?.data ?? group(timestamp), Object.fromEntries(others));
  }
  return [...groups.values()];
}

/** Whether an entry carries typed text (which must never be dropped). */
export function carriesText(entry: OutboxEntry): boolean {
  return TEXT_FIELDS.some((field) => entry.data[field] !== undefined);
}

/**
 * The client rule after an acknowledgement (D-SYNC-7): a text the server stored as sent at
 * version V becomes the base of the pending edits made on top of it and of the next edits until
 * the next pull. A merged content (D-SYNC-9) or a conflict copy moves nothing: the stored text is
 * not the one sent, and an old base only costs a merge or a copy, never text.
 */
export function acknowledge(state: NoteState, change: SyncChange, result: SyncResult): NoteState {
  if (result.status !== 'applied' || result.version === undefined || result.conflictCopyId) return state;
  const acks: NoteAcks = { ...state.acks, noteId: change.noteId };
  const fields = Object.entries(change.data ?? {}).filter(([field]) => !isTextField(field));
  if (fields.length > 0)
    acks.fields = { version: result.version, data: { ...acks.fields?.data, ...Object.fromEntries(fields) } };
  if (result.merged) return { ...state, acks };
  const sentBase = change.operation === 'create' ? NO_NOTE.version : change.baseVersion;
  let entries = state.entries;
  for (const field of TEXT_FIELDS) {
    const text = change.data?.[field];
    if (text === undefined) continue;
    const acked: TextBase = { version: result.version, text };
    acks[field] = acked;
    entries = entries.map((entry) =>
      !entry.inflight && entry.bases[field]?.version === sentBase
        ? { ...entry, bases: { ...entry.bases, [field]: acked } }
        : entry,
    );
  }
  return { ...state, entries, acks };
}

/**
 * A pulled server copy (D-SYNC-9 on the device, before pushing): each pending text edit based
 * on an older version is merged line by line with the server's text, exactly as the server would
 * merge it (src/shared/textMerge.ts), and rebased on the pulled version. When both changed the
 * same lines it keeps its base: the server then keeps the losing text as a conflict copy
 * (D-SYNC-8). A merged text is stamped `now`: it contains the server's text, so it is newer.
 * Inflight entries are resent unchanged. Acknowledgements older than the copy go.
 */
export function pulled(state: NoteState, server: ServerNote, now: number): NoteState {
  const entries = state.entries.map((entry) => {
    if (entry.inflight) return entry;
    let rebased = entry;
    for (const field of TEXT_FIELDS) {
      const base = entry.bases[field];
      const mine = entry.data[field];
      if (!base || mine === undefined || base.version >= server.version) continue;
      const merged = base.text === server[field] ? mine : mergeLines(base.text, mine, server[field]);
      if (merged === undefined) continue;
      rebased = {
        ...rebased,
        data: { ...rebased.data, [field]: merged },
        bases: { ...rebased.bases, [field]: { version: server.version, text: server[field] } },
        ...(merged === mine
          ? {}
          : { mergedAt: { ...rebased.mergedAt, [field]: Math.max(now, entry.timestamp) } }),
      };
    }
    return rebased;
  });
  return { server, entries, acks: acksNewerThan(state.acks, server.version) };
}

/**
 * The copy of a note this device created, as the server has it after applying `sent` (its
 * acknowledged entries, the create among them) at `version`, until a pull brings the server's
 * own. Without a copy, a note with no entries left would vanish from the screen between the
 * acknowledgement and that pull (closing the editor open on it), or until the next pull offline.
 */
export function acknowledgedCopy(
  sent: OutboxEntry[],
  ownerId: number,
  version: number,
): ServerNote | undefined {
  const view = localView({ entries: sent }, ownerId);
  if (!view) return undefined;
  const { pending: _pending, ...note } = view;
  return { ...note, version };
}

/** The acknowledgements a server copy at `version` does not hold yet; undefined when none. */
function acksNewerThan(acks: NoteAcks | undefined, version: number): NoteAcks | undefined {
  if (!acks) return undefined;
  const kept = Object.entries(acks).filter(
    ([key, ack]) => key !== 'noteId' && (ack as { version: number }).version > version,
  );
  return kept.length > 0 ? { noteId: acks.noteId, ...Object.fromEntries(kept) } : undefined;
}

/** What the UI shows: the server copy with the entries applied in order (docs/sync.md). */
export function localView(state: NoteState, ownerId: number): LocalNote | undefined {
  const { server, entries } = state;
  if (entries.some((entry) => entry.operation === 'delete')) return undefined;
  const first = entries[0];
  if (!server && !first) return undefined;
  let note: ServerNote = server
    ? withAcks(server, state.acks)
    : {
        id: first!.noteId,
        ownerId,
        ...NOTE_DEFAULTS,
        trashedAt: null,
        createdAt: new Date(first!.timestamp).toISOString(),
        updatedAt: new Date(first!.timestamp).toISOString(),
        version: 0,
        tags: [],
        attachments: [],
        reminder: null,
      };
  for (const entry of entries) {
    const editedAt = new Date(entry.timestamp).toISOString();
    const trashedAt =
      entry.data.trashed === undefined
        ? note.trashedAt
        : entry.data.trashed
          ? (note.trashedAt ?? editedAt)
          : null;
    note = {
      ...note,
      ...entry.data,
      trashedAt,
      updatedAt: editedAt > note.updatedAt ? editedAt : note.updatedAt,
    };
  }
  // Tags come from the hashtags (D-TAG-1): computed here with the server's own rules, so labels
  // and filters follow text typed offline before the server has seen it.
  if (entries.some(carriesText)) note = { ...note, tags: extractHashtags(note.title, note.content) };
  return { ...note, pending: entries.length > 0 };
}

/**
 * The server copy with what the server acknowledged since (docs/sync.md drops acknowledged
 * changes from the outbox): without it the note would show its old colour or text between the
 * acknowledgement and the pull that brings the new version, or until the next one when offline.
 */
function withAcks(server: ServerNote, acks: NoteAcks | undefined): ServerNote {
  const newer = acksNewerThan(acks, server.version);
  if (!newer) return server;
  return {
    ...server,
    ...newer.fields?.data,
    ...(newer.title && { title: newer.title.text }),
    ...(newer.content && { content: newer.content.text }),
  };
}

/** The fields of a note recovered from typed text whose note is gone (never drop typed text). */
export function recoveredFields(note: LocalNote): NoteFields {
  return {
    title: note.title,
    content: note.content,
    color: note.color,
    checklistMode: note.checklistMode,
    sortOrder: note.sortOrder,
  };
}
