import type { Actor } from '../../actor.js';
import type { Db } from '../../db/connection.js';
import { visibleTags } from './store.js';

export function createTagsService({ db }: { db: Db }) {
  return {
    list: (actor: Actor) => visibleTags(db, actor.userId),
  };
}

export type TagsService = ReturnType<typeof createTagsService>;
