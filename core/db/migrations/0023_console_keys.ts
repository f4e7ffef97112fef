/**
 * The web console's key per org (control/console/console-key.ts): "Try it" on a listing page calls the real gateway
 * with a normal API key of the person's org, kept for that purpose. The key itself is an ordinary `api_keys` row
 * (hashed, capped, listed, revocable); this table says which key it is and holds its plaintext encrypted with the
 * server key (AES-256-GCM, core/crypto.ts, as upstream secrets and OAuth grants' keys are), because the server must
 * present it to the gateway on every console call and a hash cannot be presented. Built with the schema builder
 * only, so it runs unchanged on PostgreSQL.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('console_keys')
    .addColumn('org_id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('key_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('console_keys').execute();
}
