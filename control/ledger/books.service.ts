/**
 * The whole-books check behind `svc-admin ledger check`: org balances equal their entries (checkLedgerConsistency),
 * no provider has paid out more than it earned, and every payout has exactly its earnings rows.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { checkLedgerConsistency, type LedgerMismatch } from './ledger.service.js';

export interface BooksReport {
  ok: boolean;
  orgs_checked: number;
  ledger_mismatches: LedgerMismatch[];
  /** Providers whose earnings ledger nets below zero (paid out more than earned). */
  provider_overdrawn: { provider_org_id: string; net_cents: number }[];
  /** Payouts whose provider_earnings rows disagree: each needs one `payout` row of -amount, and failed ones a reversal. */
  payout_mismatches: { payout_id: string; status: string; amount_cents: number; booked_cents: number }[];
}

export async function checkBooks(db: Db): Promise<BooksReport> {
  const ledger = await checkLedgerConsistency(db);
  const orgs = await db.selectFrom('balances').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const overdrawn = await sql<{ provider_org_id: string; net_cents: number }>`
    SELECT provider_org_id, SUM(net_cents) AS net_cents FROM provider_earnings GROUP BY provider_org_id HAVING SUM(net_cents) < 0`.execute(db);
  const payouts = await sql<{ payout_id: string; status: string; amount_cents: number; booked_cents: number }>`
    SELECT p.id AS payout_id, p.status, p.amount_cents,
      COALESCE((SELECT -SUM(net_cents) FROM provider_earnings e WHERE e.ref_id = p.id AND e.kind IN ('payout','reversal')), 0) AS booked_cents
    FROM payouts p`.execute(db);
  const payoutMismatches = payouts.rows.filter((p) => p.booked_cents !== (p.status === 'failed' ? 0 : p.amount_cents));
  return {
    ok: ledger.length === 0 && overdrawn.rows.length === 0 && payoutMismatches.length === 0,
    orgs_checked: Number(orgs.n),
    ledger_mismatches: ledger,
    provider_overdrawn: overdrawn.rows,
    payout_mismatches: payoutMismatches,
  };
}
