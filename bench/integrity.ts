/**
 * After the paid gateway has stopped (leases returned): does the money add up after tens of thousands of
 * calls under load? Compares the 200s clients counted with the charged usage rows, and checks the ledger.
 */
import { checkLedgerConsistency } from '../control/ledger/ledger.service.js';
import { numOf } from '../core/db/id-nums.js';
import { openTestDb } from '../test/helpers/db.js';
import { join } from 'node:path';
import Sqlite from '../core/db/sqlite-driver.js';
import { CREDIT_CENTS, PRICE_CENTS, type Seeded } from './setup.js';
import type { SettleCounts } from './targets.js';

export interface Integrity {
  /** 200 responses the load generators and checks received from the paid target. */
  clientOk: number;
  usageRows: number;
  chargedCents: number;
  ledgerChargeCents: number;
  creditCents: number;
  reservedCents: number;
  openLeases: number;
  ledgerMismatches: number;
  /**
   * Charged calls no client counted: requests in flight when a fixed-duration run stopped (the upstream answered,
   * so the call is charged and recorded). Bounded by connections × runs; never negative.
   */
  chargedNotCounted: number;
  ok: boolean;
  detail: string;
}

export async function checkIntegrity(seed: Seeded, clientOk: number, maxInFlight: number): Promise<Integrity> {
  const h = openTestDb(seed.dataDir);
  try {
    const u = await h.db
      .selectFrom('usage_calls')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('charged_cents').as('c')])
      .where('key_num', '=', numOf(seed.keyId))
      .where('charged_cents', '>', 0)
      .executeTakeFirstOrThrow();
    const l = await h.db
      .selectFrom('ledger_entries')
      .select((eb) => eb.fn.sum<number>('amount_cents').as('s'))
      .where('org_id', '=', seed.orgId)
      .where('kind', '=', 'call_charge')
      .executeTakeFirstOrThrow();
    const b = await h.db
      .selectFrom('balances')
      .select(['credit_cents', 'reserved_cents'])
      .where('org_id', '=', seed.orgId)
      .executeTakeFirstOrThrow();
    const leases = await h.db
      .selectFrom('balance_leases')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('released_at', 'is', null)
      .executeTakeFirstOrThrow();
    const bad = await checkLedgerConsistency(h.db);
    const usageRows = Number(u.n);
    const chargedCents = Number(u.c ?? 0);
    const ledgerChargeCents = -Number(l.s ?? 0);
    const notCounted = usageRows - clientOk;
    const problems: string[] = [];
    if (bad.length) problems.push(`ledger inconsistent for ${bad.length} org(s)`);
    if (chargedCents !== usageRows * PRICE_CENTS)
      problems.push(`usage charged ${chargedCents} != ${usageRows} × price`);
    if (ledgerChargeCents !== chargedCents)
      problems.push(`ledger charges ${ledgerChargeCents} != usage charges ${chargedCents}`);
    if (b.credit_cents !== CREDIT_CENTS - chargedCents)
      problems.push(`balance ${b.credit_cents} != ${CREDIT_CENTS} - ${chargedCents}`);
    if (b.reserved_cents !== 0 || Number(leases.n) !== 0)
      problems.push(`after shutdown: reserved ${b.reserved_cents}, open leases ${leases.n}`);
    if (notCounted < 0) problems.push(`${-notCounted} answered 200s have no charged usage row`);
    if (notCounted > maxInFlight)
      problems.push(
        `${notCounted} charged calls not seen by clients (> ${maxInFlight} possibly in flight at cut-offs)`,
      );
    return {
      clientOk,
      usageRows,
      chargedCents,
      ledgerChargeCents,
      creditCents: b.credit_cents,
      reservedCents: b.reserved_cents,
      openLeases: Number(leases.n),
      ledgerMismatches: bad.length,
      chargedNotCounted: notCounted,
      ok: problems.length === 0,
      detail: problems.length
        ? problems.join('; ')
        : `${clientOk} 200s seen by clients, ${usageRows} charged usage rows (${notCounted} in flight at run cut-offs), ledger = usage = balance drop = ${chargedCents} cents, no open lease after shutdown`,
    };
  } finally {
    h.close();
  }
}

/**
 * The paid gateway's settled calls and the settle commits that carried them, read from its SQLite file while it runs
 * (a WAL reader never waits for the writer): a commit that charged writes one `call_charge` ledger entry per key, and
 * the bench's consumer has one key, so its entries count its commits.
 */
export function settleCountsOf(seed: Seeded): () => SettleCounts {
  return () => {
    const db = new Sqlite(join(seed.dataDir, 'svc.db'), { readonly: true });
    try {
      const calls = db
        .prepare(
          'SELECT COUNT(*) FROM usage_calls WHERE org_num = (SELECT num FROM id_nums WHERE id = ?) AND charged_cents > 0',
        )
        .pluck();
      const commits = db
        .prepare("SELECT COUNT(*) FROM ledger_entries WHERE org_id = ? AND kind = 'call_charge'")
        .pluck();
      return { calls: Number(calls.get(seed.orgId)), commits: Number(commits.get(seed.orgId)) };
    } finally {
      db.close();
    }
  };
}
