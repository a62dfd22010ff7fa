import { type Kysely, sql } from 'kysely';

/** API keys (D-KEY-1..3) and the MCP sessions opened with them (D-MCP-2). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      key_hash TEXT NOT NULL UNIQUE,
      key_prefix TEXT NOT NULL,
      scopes TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER
    )`.execute(db);
  await sql`CREATE INDEX api_keys_user ON api_keys (user_id, created_at)`.execute(db);

  // Revoking a key ends its sessions through the cascade.
  await sql`
    CREATE TABLE mcp_sessions (
      id TEXT PRIMARY KEY,
      key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX mcp_sessions_key ON mcp_sessions (key_id)`.execute(db);
  await sql`CREATE INDEX mcp_sessions_idle ON mcp_sessions (last_used_at)`.execute(db);
}
