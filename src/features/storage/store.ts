import type { Db } from '../../db/types.js';

/** The bytes a user's notes and attachments take (kept by the triggers of migration 0008). */
export async function storageUsed(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('storage_usage')
    .select('bytes')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.bytes ?? 0;
}
