/**
 * The whole-books check behind `svc-admin ledger check`: org balances equal their entries (checkLedgerConsistency),
 * call charges and provider earnings equal the usage rows they were written with, no provider has paid out more
 * than it earned, and every payout has exactly its earnings rows.
 */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { checkLedgerConsistency, type LedgerMismatch } from './ledger.service.js';

export interface BooksReport {
  ok: boolean;
  orgs_checked: number;
  ledger_mismatches: LedgerMismatch[];
  /** Providers whose earnings ledger nets below zero (paid out more than earned). */
  provider_overdrawn: { provider_org_id: string; net_cents: number }[];
  /**
   * Orgs (consumers) and providers whose per-batch money rows disagree with their per-call usage rows: the gateway
   * writes both in one transaction, so Σ `call_charge` = −Σ usage `charged_cents` per org, and Σ `earning` gross
   * = Σ usage `charged_cents` per provider.
   */
  usage_mismatches: UsageMismatch[];
  /** Payouts whose provider_earnings rows disagree: each needs one `payout` row of -amount, and failed ones a reversal. */
  payout_mismatches: { payout_id: string; status: string; amount_cents: number; booked_cents: number }[];
}

export interface UsageMismatch {
  side: 'consumer' | 'provider';
  org_id: string;
  /** Σ usage_calls.charged_cents of the org's calls (consumer) or of calls to its APIs (provider). */
  usage_cents: number;
  /** −Σ call_charge entries (consumer) or Σ earning gross (provider). */
  booked_cents: number;
}

/** @internal The operator's books check (`svc-admin ledger check`). */
export async function checkUsageCharges(db: Db): Promise<UsageMismatch[]> {
  const { rows } = await sql<UsageMismatch>`
    WITH un AS (SELECT org_num, provider_num, SUM(charged_cents) AS cents FROM usage_calls WHERE charged_cents > 0 GROUP BY org_num, provider_num),
    u AS (SELECT o.id AS org_id, p.id AS provider_org_id, un.cents FROM un JOIN id_nums o ON o.num = un.org_num JOIN id_nums p ON p.num = un.provider_num),
    c AS (SELECT org_id, -SUM(amount_cents) AS cents FROM ledger_entries WHERE kind = 'call_charge' GROUP BY org_id),
    e AS (SELECT provider_org_id AS org_id, SUM(gross_cents) AS cents FROM provider_earnings WHERE kind = 'earning' GROUP BY provider_org_id),
    consumer AS (SELECT org_id, SUM(cents) AS cents FROM u GROUP BY org_id),
    provider AS (SELECT provider_org_id AS org_id, SUM(cents) AS cents FROM u GROUP BY provider_org_id),
    orgs AS (SELECT org_id FROM consumer UNION SELECT org_id FROM c UNION SELECT org_id FROM provider UNION SELECT org_id FROM e)
    SELECT 'consumer' AS side, o.org_id, COALESCE(consumer.cents, 0) AS usage_cents, COALESCE(c.cents, 0) AS booked_cents
      FROM orgs o LEFT JOIN consumer ON consumer.org_id = o.org_id LEFT JOIN c ON c.org_id = o.org_id
      WHERE COALESCE(consumer.cents, 0) <> COALESCE(c.cents, 0)
    UNION ALL
    SELECT 'provider', o.org_id, COALESCE(provider.cents, 0), COALESCE(e.cents, 0)
      FROM orgs o LEFT JOIN provider ON provider.org_id = o.org_id LEFT JOIN e ON e.org_id = o.org_id
      WHERE COALESCE(provider.cents, 0) <> COALESCE(e.cents, 0)`.execute(db);
  return rows;
}

/** @internal The operator's books check (`svc-admin ledger check`). */
export async function checkBooks(db: Db): Promise<BooksReport> {
  const ledger = await checkLedgerConsistency(db);
  const usage = await checkUsageCharges(db);
  const orgs = await db
    .selectFrom('balances')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const overdrawn = await sql<{ provider_org_id: string; net_cents: number }>`
    SELECT provider_org_id, SUM(net_cents) AS net_cents FROM provider_earnings GROUP BY provider_org_id HAVING SUM(net_cents) < 0`.execute(
    db,
  );
  const payouts = await sql<{ payout_id: string; status: string; amount_cents: number; booked_cents: number }>`
    SELECT p.id AS payout_id, p.status, p.amount_cents,
      COALESCE((SELECT -SUM(net_cents) FROM provider_earnings e WHERE e.ref_id = p.id AND e.kind IN ('payout','reversal')), 0) AS booked_cents
    FROM payouts p`.execute(db);
  const payoutMismatches = payouts.rows.filter((p) => p.booked_cents !== (p.status === 'failed' ? 0 : p.amount_cents));
  return {
    ok: ledger.length === 0 && usage.length === 0 && overdrawn.rows.length === 0 && payoutMismatches.length === 0,
    orgs_checked: Number(orgs.n),
    ledger_mismatches: ledger,
    usage_mismatches: usage,
    provider_overdrawn: overdrawn.rows,
    payout_mismatches: payoutMismatches,
  };
}
