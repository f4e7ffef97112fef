/**
 * Billing: when the processor created the setup behind the card on file, so a late, older
 * `setup_intent.succeeded` cannot replace a newer card (webhooks arrive in any order).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw('ALTER TABLE billing_accounts ADD COLUMN card_setup_created_at INTEGER').execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('ALTER TABLE billing_accounts DROP COLUMN card_setup_created_at').execute(db);
}
