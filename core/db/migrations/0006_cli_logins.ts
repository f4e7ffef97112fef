/**
 * `svc login` by browser: one row per CLI sign-in attempt. A `code` row is the one-time code a confirmed browser
 * hands to the CLI's loopback callback (bound to the PKCE challenge and redirect_uri); a `device` row is the
 * no-browser flow (a device code the CLI polls with, a short user code the person types). Codes are stored hashed.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE cli_logins (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('code', 'device')),
    secret_hash TEXT NOT NULL UNIQUE,
    user_code_hash TEXT UNIQUE,
    code_challenge TEXT,
    redirect_uri TEXT,
    org_id TEXT REFERENCES orgs(id),
    user_id TEXT REFERENCES users(id),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    confirmed_at INTEGER,
    consumed_at INTEGER
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS cli_logins`.execute(db);
}
