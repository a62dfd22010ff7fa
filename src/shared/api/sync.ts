/** The sync protocol's wire shapes (docs/sync.md), shared by the server and the web app. */
import { type Static, Type } from 'typebox';
import { Uuid } from './ids.js';
import { NoteInput } from './notes.js';

/**
 * The latest instant a JavaScript Date can hold (±8.64e15 ms, about the year 275760): a later
 * change timestamp could not be written as the ISO date of a conflict copy (D-SYNC-8).
 */
export const MAX_CHANGE_TIMESTAMP = 8.64e15;

export const SYNC_OPERATIONS = ['create', 'update', 'delete'] as const;
export type SyncOperation = (typeof SYNC_OPERATIONS)[number];

/**
 * One change of a push: the SyncChange of docs/interface.md#other-shapes, plus the optional
 * baseVersion of D-SYNC-8.
 * create and update need `data` (D-SYNC-4); `data.id`, if sent, is ignored: `noteId` decides.
 */
export const SyncChange = Type.Object(
  {
    noteId: Uuid,
    operation: Type.Unsafe<SyncOperation>({ type: 'string', enum: [...SYNC_OPERATIONS] }),
    timestamp: Type.Integer({
      minimum: 0,
      maximum: MAX_CHANGE_TIMESTAMP,
      description:
        'Unix ms when the change was made on the device; more than 5 minutes ahead of the server is stamped with the server’s time',
    }),
    baseVersion: Type.Optional(
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Note version last seen' }),
    ),
    data: Type.Optional(NoteInput),
  },
  {
    title: 'SyncChange',
    if: { properties: { operation: { enum: ['create', 'update'] } }, required: ['operation'] },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema if/then; this object is never awaited.
    then: { required: ['data'] },
  },
);
export type SyncChange = Static<typeof SyncChange>;

export const SYNC_SKIP_REASONS = ['stale', 'forbidden', 'deleted'] as const;
export type SyncSkipReason = (typeof SYNC_SKIP_REASONS)[number];

/** D-SYNC-7 */
export const SyncResult = Type.Object({
  noteId: Type.String(),
  status: Type.Unsafe<'applied' | 'skipped'>({ type: 'string', enum: ['applied', 'skipped'] }),
  reason: Type.Optional(Type.Unsafe<SyncSkipReason>({ type: 'string', enum: [...SYNC_SKIP_REASONS] })),
  conflictCopyId: Type.Optional(Uuid),
  version: Type.Optional(
    Type.Integer({
      description: "The note's version after the change, when the note exists and you can see it",
    }),
  ),
  merged: Type.Optional(
    Type.Literal(true, {
      description:
        'The content stored at `version` is your content merged with other edits (D-SYNC-9), not the text you sent',
    }),
  ),
});
export type SyncResult = Static<typeof SyncResult>;

export const Tombstone = Type.Object({
  id: Uuid,
  deletedAt: Type.Integer({ description: 'Unix ms' }),
});
export type Tombstone = Static<typeof Tombstone>;
