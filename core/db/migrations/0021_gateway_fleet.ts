/**
 * Gateways on many hosts (issue 27).
 * - `gateway_instances.host`: the holder's host identity (hostname plus the kernel's boot id). A reaper may test
 *   a holder's pid only when the holder runs on its own host (and booted the same time): a pid "missing" here says
 *   nothing about a process on another machine, and staleness alone decides there.
 * - `balance_leases.unfolded_cents`: charges settled against the lease that are not yet folded into the shared
 *   rows (`balances`, `api_keys.spent_cents`, `key_daily_spend`). The PostgreSQL settle batch bumps only its own
 *   lease row and folds at extend, release and reap (docs/scale-out.md). SQLite's writer folds in every batch, so
 *   it stays 0 there. Invariants: credit = Σ settled ledger − Σ open unfolded; reserved = Σ open (amount − spent +
 *   unfolded).
 * - `balance_leases_org`: open slices by org (the other holders' unspent slices when a call is refused, the
 *   estimated credit each PostgreSQL batch reads).
 * Plain ADD COLUMN with a constant default and a partial index: the same statements on SQLite and PostgreSQL.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE gateway_instances ADD COLUMN host TEXT NOT NULL DEFAULT ''`.execute(db);
  await sql`ALTER TABLE balance_leases ADD COLUMN unfolded_cents BIGINT NOT NULL DEFAULT 0`.execute(db);
  await sql`CREATE INDEX balance_leases_org ON balance_leases(org_id) WHERE released_at IS NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS balance_leases_org`.execute(db);
  await sql`ALTER TABLE balance_leases DROP COLUMN unfolded_cents`.execute(db);
  await sql`ALTER TABLE gateway_instances DROP COLUMN host`.execute(db);
}
