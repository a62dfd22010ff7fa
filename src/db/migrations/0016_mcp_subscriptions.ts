import { type Kysely, sql } from 'kysely';

/**
 * The note resources an MCP session subscribed to (decision 0045): in the database, like the
 * sessions, so that a subscribe answered by one process is heard by the process holding the
 * session's event stream. Ending a session (DELETE, idle, a revoked key) ends its subscriptions.
 * The same statements on both engines.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE mcp_subscriptions (
      session_id TEXT NOT NULL REFERENCES mcp_sessions (id) ON DELETE CASCADE,
      note_id TEXT NOT NULL,
      PRIMARY KEY (session_id, note_id)
    )`.execute(db);
}
