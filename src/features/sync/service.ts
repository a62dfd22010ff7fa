import type { Actor } from '../../actor.js';
import { requireWriteScope } from '../../actor.js';
import type { Clock } from '../../clock.js';
import { transaction } from '../../db/transaction.js';
import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import { eventLoopTurns, WRITE_SLICE_MS } from '../../eventLoop.js';
import type { AttachmentRow } from '../../model/attachments.js';
import { endCollaboration, shareLikeNote } from '../../model/collaborators.js';
import {
  type AccessDenial,
  decideNoteAccess,
  denialError,
  type FoundNote,
  findNotesForAccess,
  type NoteAction,
} from '../../model/noteAccess.js';
import { collectBatches, noteViewBatches } from '../../model/noteAnswers.js';
import {
  type FieldHistory,
  fieldHistory,
  fieldValues,
  type NoteFields,
  pickNoteFields,
} from '../../model/noteFields.js';
import type { ListedNoteVersion, NoteRole, NoteRow } from '../../model/notes.js';
import { applyNoteFields, deleteNotesForGood, insertNote } from '../../model/noteWrites.js';
import type { PersonalFields } from '../../model/personal.js';
import { revisionAt } from '../../model/revisions.js';
import { deletedAmong, deleteTombstonesBefore, tombstonesSince } from '../../model/tombstones.js';
import type { Note } from '../../shared/api/notes.js';
import type { SyncChange, SyncResult, Tombstone } from '../../shared/api/sync.js';
import type { NotesService } from '../notes/service.js';
import {
  applyOrder,
  BatchFields,
  conflictCopyId,
  conflictCopyText,
  type LosingText,
  mergeChange,
} from './merge.js';
import * as store from './store.js';
import { capFutureTimestamps } from './timestamps.js';

/** Tombstones are kept this long (D-SYNC-3); a device away longer must resync from scratch. */
const TOMBSTONE_RETENTION_DAYS = 90;
const TOMBSTONE_RETENTION_MS = TOMBSTONE_RETENTION_DAYS * 86_400_000;

interface SyncDeps {
  db: Db;
  clock: Clock;
  notes: NotesService;
  /** The pusher's own fields a change may set (the reminder), synced like the note's. */
  personal?: PersonalFields;
}

/**
 * What the push knows about the note ids it touches, read for the whole batch in two queries
 * up front and kept current as the push writes, so that each change sees the effect of the
 * earlier ones (D-SYNC-4) without reading its note again. An id not known yet (a conflict
 * copy's, or one the push deleted) is read the same way when first asked for.
 */
class KnownNotes {
  /** Per id: the note and the pusher's role (undefined: cannot see it), or undefined: no note. */
  private readonly notes = new Map<string, FoundNote | undefined>();
  /** Per id: whether anyone holds a tombstone for it. */
  private readonly tombstoned = new Map<string, boolean>();

  constructor(
    private readonly trx: Db,
    private readonly actor: Actor,
  ) {}

  async load(noteIds: readonly string[]): Promise<void> {
    const ids = [...new Set(noteIds.map((id) => id.toLowerCase()))];
    const [found, deleted] = await Promise.all([
      findNotesForAccess(this.trx, this.actor, ids),
      deletedAmong(this.trx, ids),
    ]);
    for (const id of ids) {
      this.notes.set(id, found.get(id));
      this.tombstoned.set(id, deleted.has(id));
    }
  }

  /** The note of this id and the pusher's role on it, for decideNoteAccess; undefined: no note. */
  async find(noteId: string): Promise<FoundNote | undefined> {
    if (!this.notes.has(noteId)) await this.load([noteId]);
    return this.notes.get(noteId);
  }

  /** Whether a note has this id, visible to the pusher or not. */
  async exists(noteId: string): Promise<boolean> {
    return (await this.find(noteId)) !== undefined;
  }

  /** Whether anyone holds a tombstone for this id: it was deleted, so it stays deleted (D-SYNC-6). */
  async wasDeleted(noteId: string): Promise<boolean> {
    if (!this.tombstoned.has(noteId)) await this.load([noteId]);
    return this.tombstoned.get(noteId) === true;
  }

  /** The pusher now holds this note in this state (created or changed by the push). */
  stored(note: NoteRow, role: NoteRole): void {
    this.notes.set(note.id, { note, role });
  }

  /** The push deleted the note or left it: read it afresh if asked again. */
  forget(noteId: string): void {
    this.notes.delete(noteId);
    this.tombstoned.delete(noteId);
  }
}

interface PushContext {
  actor: Actor;
  now: number;
  batch: BatchFields;
  known: KnownNotes;
  /** Attachment rows of notes deleted by the push; their files go once it has committed. */
  removed: AttachmentRow[];
}

/**
 * A push result (D-SYNC-7), without the optional fields that do not apply. `version` is the
 * note's version after the change, given whenever the note exists and the pusher can see it;
 * `merged` says the content stored at that version is a merge, not the text sent (D-SYNC-9).
 */
function result(
  change: SyncChange,
  outcome: {
    reason?: SyncResult['reason'];
    conflictCopyId?: string;
    version?: number;
    merged?: boolean;
  } = {},
): SyncResult {
  const { reason, conflictCopyId, version, merged } = outcome;
  return {
    noteId: change.noteId,
    status: reason === undefined ? 'applied' : 'skipped',
    ...(reason !== undefined && { reason }),
    ...(conflictCopyId !== undefined && { conflictCopyId }),
    ...(version !== undefined && { version }),
    ...(merged === true && { merged }),
  };
}

/**
 * A change that decideNoteAccess refused, other than for a missing note (which each operation
 * answers its own way): a note the pusher cannot see is `skipped: forbidden`, without saying
 * more about it (D-SYNC-6); any other refusal fails the push with the decision's error.
 */
function refused(change: SyncChange, reason: Exclude<AccessDenial, 'missing'>, action: NoteAction) {
  if (reason === 'hidden') return result(change, { reason: 'forbidden' });
  throw denialError(reason, action);
}

/**
 * The content the device based its change on (D-SYNC-9), read only when a merge may be needed:
 * the change sets content, says its baseVersion, and the note's content changed after it.
 * Undefined otherwise, or when that revision is no longer kept.
 */
async function baseContentFor(
  trx: Db,
  note: NoteRow,
  history: FieldHistory,
  data: Partial<NoteFields>,
  baseVersion: number | undefined,
): Promise<string | undefined> {
  if (data.content === undefined || baseVersion === undefined) return undefined;
  if (history.version.content <= baseVersion) return undefined;
  return (await revisionAt(trx, note.id, baseVersion))?.content;
}

export function createSyncService({ db, clock, notes, personal }: SyncDeps) {
  /** The pusher's reminder a change sets, stamped with the change's time (last writer wins). */
  async function writePersonal(trx: Db, context: PushContext, noteId: string, change: SyncChange) {
    if (change.data?.reminder === undefined) return;
    await personal?.write(trx, context.actor.userId, noteId, change.data, change.timestamp, context.now);
  }

  /**
   * Keeps the losing texts of a change as a new note of the note's owner, shared with the note's
   * collaborators, so everyone who could see the note sees what lost (D-SYNC-8); the pusher, who
   * can see the note, is one of them. The id comes from the change, so a repeated push finds the
   * copy it made before, or leaves it deleted if it has been deleted since.
   */
  async function keepConflictCopy(
    trx: Db,
    context: PushContext,
    note: NoteRow,
    change: SyncChange,
    losers: LosingText[],
  ): Promise<string> {
    const first = losers[0]!;
    const id = conflictCopyId(note.id, first.field, change.timestamp);
    if ((await context.known.exists(id)) || (await context.known.wasDeleted(id))) return id;
    const lostTitle = losers.find((l) => l.field === 'title');
    const lostContent = losers.find((l) => l.field === 'content');
    const text = conflictCopyText(
      {
        title: lostTitle?.text ?? note.title,
        content: lostContent?.text ?? note.content,
        titleLost: lostTitle !== undefined,
      },
      first.stampedAt,
    );
    const { color, checklistMode, sortOrder } = fieldValues(note);
    const pusher = context.actor.userId;
    const copy = await insertNote(trx, {
      ownerId: note.owner_id,
      authorId: pusher,
      id,
      values: { ...text, color, checklistMode, sortOrder },
      now: context.now,
      stampedAt: context.now,
    });
    await shareLikeNote(trx, note.id, copy.id, context.now);
    context.known.stored(copy, note.owner_id === pusher ? 'owner' : 'collaborator');
    return id;
  }

  /**
   * A pushed delete, as the access decision allows it (D-COLLAB-1): the owner deletes the note
   * for good; a collaborator may not, and leaves it instead (the note goes from their devices
   * only); an id no note has is already deleted.
   */
  async function applyDelete(
    trx: Db,
    context: PushContext,
    change: SyncChange,
    noteId: string,
    found: FoundNote | undefined,
  ) {
    const { actor, now, known } = context;
    const own = decideNoteAccess(actor, found, 'own');
    if (own.allowed) {
      context.removed.push(...(await deleteNotesForGood(trx, [own.note], now)));
    } else {
      const leave = decideNoteAccess(actor, found, 'leave');
      if (!leave.allowed) {
        return leave.reason === 'missing' ? result(change) : refused(change, leave.reason, 'leave');
      }
      await endCollaboration(trx, noteId, actor.userId, now);
    }
    known.forget(noteId);
    return result(change);
  }

  /** One change, as D-SYNC-6 says; the note is read afresh, so earlier changes of the batch count. */
  async function applyChange(trx: Db, context: PushContext, change: SyncChange, index: number) {
    const { actor, now, known } = context;
    const noteId = change.noteId.toLowerCase();
    const found = await known.find(noteId);
    if (change.operation === 'delete') return applyDelete(trx, context, change, noteId, found);

    const data = pickNoteFields(change.data ?? {});
    const access = decideNoteAccess(actor, found, 'edit');
    if (!access.allowed) {
      if (access.reason !== 'missing') return refused(change, access.reason, 'edit');
      if (await known.wasDeleted(noteId)) return result(change, { reason: 'deleted' }); // delete wins
      const created = await insertNote(trx, {
        ownerId: actor.userId,
        authorId: actor.userId,
        id: noteId,
        values: data,
        now,
        // Fields the change does not set keep their defaults at stamp 0, so that any change,
        // e.g. the create arriving after this update, may still set them.
        stampedAt: (field) => (data[field] === undefined ? 0 : change.timestamp),
      });
      known.stored(created, 'owner');
      await writePersonal(trx, context, noteId, change);
      return result(change, { version: created.version });
    }

    // A create describes the note at version 1: whatever changed since is someone else's.
    const baseVersion = change.baseVersion ?? (change.operation === 'create' ? 1 : undefined);
    const history = fieldHistory(access.note);
    const decision = mergeChange({
      index,
      noteId,
      timestamp: change.timestamp,
      baseVersion,
      baseContent: await baseContentFor(trx, access.note, history, data, baseVersion),
      data,
      stored: fieldValues(access.note),
      history,
      batch: context.batch,
    });
    const { note } = await applyNoteFields(trx, access.note, decision.accepted, {
      now,
      stampedAt: (field) => decision.stampedAt[field] ?? change.timestamp,
      authorId: actor.userId,
    });
    known.stored(note, access.role);
    await writePersonal(trx, context, noteId, change);
    const conflictCopyId =
      decision.losers.length > 0
        ? await keepConflictCopy(trx, context, note, change, decision.losers)
        : undefined;
    const reason = decision.stale ? ('stale' as const) : undefined;
    return result(change, { reason, conflictCopyId, version: note.version, merged: decision.merged });
  }

  /**
   * D-SYNC-1: the time is read before the ids, once the writes that may stamp an earlier time
   * have committed (settledSyncTime), so a change committed meanwhile comes next time. The
   * notes are read batch by batch as the answer is sent (GET /api/sync streams it), each in the
   * version listed (a cached answer, decision 0023) or a newer one: a note changed meanwhile
   * may come in its newer state (and comes again next time); one deleted or unshared meanwhile
   * is left out when it is read, or sent as listed when cached, and either way its tombstone is
   * newer than syncTime, so the next pull of deletions removes it.
   */
  async function changedSince(
    actor: Actor,
    since: number,
  ): Promise<{ syncTime: number; changed: ListedNoteVersion[] }> {
    const syncTime = await store.settledSyncTime(db, () => clock.now());
    const changed = await store.notesChangedSince(db, actor.userId, since);
    // A note whose reminder of the puller changed comes again, with the reminder (decision 0034).
    const reminded = personal ? await personal.changedSince(db, actor.userId, since) : [];
    if (reminded.length > 0) {
      const listed = new Set(changed.map((note) => note.id));
      const more = reminded.filter((id) => !listed.has(id));
      changed.push(...(await store.visibleNotesAmong(db, actor.userId, more)));
    }
    return { syncTime, changed };
  }

  return {
    /** The pull as each note's answer in UTF-8 JSON, from the lists' cache, for REST to send as is. */
    async pullAsJson(
      actor: Actor,
      since: number,
    ): Promise<{ syncTime: number; jsonBatches: AsyncIterable<Buffer[]> }> {
      const { syncTime, changed } = await changedSince(actor, since);
      const { lookup } = await notes.personalOf(actor.userId);
      return { syncTime, jsonBatches: notes.answersAsJson(actor, changed, lookup) };
    },

    async pull(actor: Actor, since: number): Promise<{ syncTime: number; notes: Note[] }> {
      const { syncTime, changed } = await changedSince(actor, since);
      const pulled = await collectBatches(noteViewBatches(db, actor.userId, changed));
      return { syncTime, notes: await notes.forReader(actor.userId, pulled) };
    },

    /**
     * D-SYNC-3. A `since` older than the retention period cannot be answered completely, so it is
     * refused with 410 `resync_required` rather than answered with a silent gap (0 is allowed: a
     * new device has nothing to delete).
     */
    async deleted(actor: Actor, since: number): Promise<{ syncTime: number; deleted: Tombstone[] }> {
      const syncTime = await store.settledSyncTime(db, () => clock.now());
      if (since > 0 && since < syncTime - TOMBSTONE_RETENTION_MS) {
        throw errors.resyncRequired(
          `Deletions are kept for ${TOMBSTONE_RETENTION_DAYS} days; pull everything with since=0 and replace your local notes`,
        );
      }
      const rows = await tombstonesSince(db, actor.userId, since);
      return { syncTime, deleted: rows.map((r) => ({ id: r.note_id, deletedAt: r.deleted_at })) };
    },

    /**
     * D-SYNC-4..8: the batch (already validated whole) is applied in one transaction in ascending
     * timestamp order, stamps from the future capped first; the results come back in the order
     * of the changes.
     */
    async push(actor: Actor, pushed: readonly SyncChange[]): Promise<SyncResult[]> {
      requireWriteScope(actor);
      const changes = capFutureTimestamps(pushed, clock.now());
      const results: SyncResult[] = new Array(changes.length);
      // Alone: a push is already one transaction for its whole batch (up to MAX_SYNC_CHANGES).
      const removed = await transaction(
        db,
        async (trx) => {
          const context: PushContext = {
            actor,
            now: clock.now(),
            batch: new BatchFields(changes),
            known: new KnownNotes(trx, actor),
            removed: [],
          };
          await context.known.load(changes.map((c) => c.noteId));
          // Other requests wait for the connection (one transaction, D-SYNC-4) but are accepted.
          const giveWay = eventLoopTurns(WRITE_SLICE_MS);
          for (const index of applyOrder(changes)) {
            results[index] = await applyChange(trx, context, changes[index]!, index);
            await giveWay();
          }
          return context.removed;
        },
        { group: false },
      );
      await notes.notifyDeleted(removed);
      return results;
    },

    /** Forgets tombstones older than the retention period (D-SYNC-3); returns how many. */
    async purgeExpiredTombstones(): Promise<number> {
      return deleteTombstonesBefore(db, clock.now() - TOMBSTONE_RETENTION_MS);
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
