/**
 * OAuth 2.1 authorization server (control/oauth): clients (registered or Client ID Metadata Documents, cached),
 * grants (one approval; the refresh-token family), codes, tokens, and step-up handles that let an approval elevate
 * a registered key. Codes, tokens and handles are stored as sha256 only.
 */
import { sql, type Kysely } from 'kysely';

const STATEMENTS = [
  `CREATE TABLE oauth_clients (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('registered','metadata_document')),
    client_name TEXT,
    redirect_uris TEXT NOT NULL,
    metadata TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    fetched_at INTEGER
  )`,
  `CREATE TABLE oauth_grants (
    id TEXT PRIMARY KEY,
    client_id TEXT NOT NULL REFERENCES oauth_clients(id),
    org_id TEXT NOT NULL REFERENCES orgs(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    key_minted INTEGER NOT NULL CHECK (key_minted IN (0,1)),
    key_secret TEXT,
    resource TEXT NOT NULL,
    scope TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER,
    revoked_reason TEXT
  )`,
  `CREATE INDEX oauth_grants_org ON oauth_grants(org_id)`,
  `CREATE TABLE oauth_codes (
    code_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL REFERENCES oauth_grants(id),
    redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    consumed_at INTEGER
  )`,
  `CREATE TABLE oauth_tokens (
    token_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('access','refresh')),
    grant_id TEXT NOT NULL REFERENCES oauth_grants(id),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    rotated_at INTEGER,
    revoked_at INTEGER
  )`,
  `CREATE INDEX oauth_tokens_grant ON oauth_tokens(grant_id)`,
  `CREATE TABLE oauth_step_ups (
    handle_hash TEXT PRIMARY KEY,
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    key_secret TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    consumed_at INTEGER
  )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const s of STATEMENTS) await sql.raw(s).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['oauth_step_ups', 'oauth_tokens', 'oauth_codes', 'oauth_grants', 'oauth_clients'])
    await sql.raw(`DROP TABLE IF EXISTS ${t}`).execute(db);
}
