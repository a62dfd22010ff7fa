import type { Db } from '../../db/types.js';
import { errors } from '../../errors.js';
import { storageUsed } from './store.js';

/**
 * The per-user storage quota (docs/decisions/0008-resource-limits.md). Usage is the UTF-8
 * bytes of the titles and contents of the notes a user owns plus their attachments' files and
 * thumbnails, whoever wrote them: a collaborator's edit counts against the note owner. The
 * database calls `check` from a trigger each time a user's usage grows, inside the write, so
 * every write path (REST, sync push, MCP, uploads) is refused the same way and nothing is
 * half-written; a write that frees space is never checked. `null`: no quota.
 */
export function storageQuota(quotaBytes: number | null) {
  function check(bytes: number): void {
    if (quotaBytes !== null && bytes > quotaBytes) throw errors.quotaExceeded(quotaBytes);
  }
  return {
    check,
    /** Refuses early, before costly work (decoding an upload), a write adding `bytes` to the user's usage. */
    async requireRoom(db: Db, userId: number, bytes: number): Promise<void> {
      if (quotaBytes !== null) check((await storageUsed(db, userId)) + bytes);
    },
  };
}

export type StorageQuota = ReturnType<typeof storageQuota>;
