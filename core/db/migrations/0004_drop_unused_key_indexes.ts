/**
 * Drops two indexes no query uses (per-key lookups go through the org index plus a filter), because every
 * metered call pays for each index of ledger_entries and usage_events inside the gateway's group commit.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS ledger_key`.execute(db);
  await sql`DROP INDEX IF EXISTS usage_key`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS ledger_key ON ledger_entries(key_id, created_at)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS usage_key ON usage_events(key_id, created_at)`.execute(db);
}
