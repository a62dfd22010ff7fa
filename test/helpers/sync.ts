import type { FastifyInstance } from 'fastify';

/**
 * Shares a note with a user straight through the database. Extension point: once the
 * collaboration feature exists (POST /api/notes/:id/collaborators), tests may call that instead.
 */
export async function shareNote(app: FastifyInstance, noteId: string, userId: number, addedAt = Date.now()) {
  await app.db
    .insertInto('note_collaborators')
    .values({ note_id: noteId, user_id: userId, added_at: addedAt })
    .execute();
}
