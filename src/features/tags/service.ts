import { createHash } from 'node:crypto';
import type { Actor } from '../../actor.js';
import type { Db } from '../../db/types.js';
import { visibleTagNames } from '../../model/tags.js';
import type { Tag } from './schemas.js';

/**
 * A tag's id as one user sees it: the first 53 bits (a safe integer) of SHA-256 over the user's
 * id and the tag name. It depends on nothing but what the user knows, so it cannot tell them
 * whether or when anyone else used the name (database ids, handed out on first use, could);
 * it is stable while the tag exists, and after (D-TAG-2). Two of one user's tags sharing an id
 * would take about 10^8 tags.
 */
export function viewerTagId(userId: number, name: string): number {
  const digest = createHash('sha256').update(`${userId}\u0000${name}`).digest();
  return Number(digest.readBigUInt64BE(0) >> 11n);
}

export function createTagsService({ db }: { db: Db }) {
  return {
    list: async (actor: Actor): Promise<Tag[]> =>
      (await visibleTagNames(db, actor.userId)).map((name) => ({
        id: viewerTagId(actor.userId, name),
        name,
      })),
  };
}

export type TagsService = ReturnType<typeof createTagsService>;
