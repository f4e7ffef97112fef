/**
 * MCP sessions of the 2025-11-25 protocol era (mcp/sessions.ts): the session id is stored as sha256 only, the
 * session's API key encrypted with the data dir's secret key (the MCP server sends it to the gateway for
 * `call_api`), so a session outlives an MCP server restart. Rows expire 30 days after last use and are swept.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE mcp_sessions (
    id_hash TEXT PRIMARY KEY,
    key_id TEXT REFERENCES api_keys(id),
    key_secret TEXT,
    protocol_version TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID`.execute(db);
  await sql`CREATE INDEX mcp_sessions_expires ON mcp_sessions(expires_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE mcp_sessions`.execute(db);
}
