/**
 * Provider payouts: for a period (UTC month `YYYY-MM`), transfer each provider's unpaid net earnings above the
 * minimum to its connected account, exactly once (payouts UNIQUE(provider_org_id, period), transfer idempotency
 * key `payout:{payout id}`). The payout is a negative `payout` row in provider_earnings; a failed transfer is
 * undone by a `reversal` row so the money rolls into the next period.
 */
import { emitEvent } from '../webhooks/events.js';
import { sql } from 'kysely';
import type { BillingCtx } from './payments.js';
import type { Db, Row } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { getConnectAccount, toConnectResource } from './connect.service.js';
import type { ProviderPayouts } from '../../core/schemas/billing.schemas.js';
import { assertScope, type Principal } from '../auth/principal.js';

/** A pending payout older than this is an interrupted run, not a concurrent one still waiting on its transfer. */
const STALE_PENDING_MS = 10 * 60_000;

/** @public Pure date arithmetic. */
export function periodOf(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** @public Pure date arithmetic. */
export function previousPeriod(ms: number): string {
  const d = new Date(ms);
  return periodOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1));
}

/**
 * First ms after the period.
 * @public Pure date arithmetic.
 */
export function periodEnd(period: string): number {
  const m = /^(\d{4})-(\d{2})$/.exec(period);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 12)
    throw new SvcError('validation_failed', `period must be YYYY-MM, got "${period}"`);
  return Date.UTC(Number(m[1]), Number(m[2]), 1);
}

/**
 * Unpaid net of a provider for payouts up to `cutoff`: earnings before the cutoff, plus every payout and
 * reversal ever written (whatever their time), so a back-filled older period can never pay the same cents twice.
 * @internal A step of runPayouts and providerPayouts.
 */
export async function payableCents(db: Db, providerOrgId: string, cutoff: number): Promise<number> {
  const r = await sql<{ n: number | null }>`
    SELECT SUM(net_cents) AS n FROM provider_earnings
    WHERE provider_org_id = ${providerOrgId} AND (kind != 'earning' OR created_at < ${cutoff})`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** @internal A step of providerPayouts, which authorizes. */
export async function earningsSummary(db: Db, providerOrgId: string) {
  const r = await sql<{
    gross: number | null;
    fee: number | null;
    earned: number | null;
    paid: number | null;
    net: number | null;
  }>`
    SELECT SUM(CASE WHEN kind != 'payout' THEN gross_cents END) AS gross,
           SUM(CASE WHEN kind != 'payout' THEN fee_cents END) AS fee,
           SUM(CASE WHEN kind = 'earning' OR (kind = 'reversal' AND idempotency_key NOT LIKE 'payout\\_reversal:%' ESCAPE '\\') THEN net_cents END) AS earned,
           SUM(CASE WHEN kind = 'payout' OR idempotency_key LIKE 'payout\\_reversal:%' ESCAPE '\\' THEN -net_cents END) AS paid,
           SUM(net_cents) AS net
    FROM provider_earnings WHERE provider_org_id = ${providerOrgId}`.execute(db);
  const row = r.rows[0];
  return {
    gross_cents: Number(row?.gross ?? 0),
    fee_cents: Number(row?.fee ?? 0),
    net_earned_cents: Number(row?.earned ?? 0),
    paid_out_cents: Number(row?.paid ?? 0),
    available_cents: Number(row?.net ?? 0),
  };
}

export interface PayoutRunItem {
  provider_org_id: string;
  outcome: 'paid' | 'failed' | 'already_done' | 'below_minimum' | 'no_account' | 'payouts_disabled';
  amount_cents: number;
  payout_id?: string;
  transfer_id?: string;
  reason?: string;
}

async function transferAndSettle(ctx: BillingCtx, payout: Row<'payouts'>, accountId: string): Promise<PayoutRunItem> {
  const base = { provider_org_id: payout.provider_org_id, amount_cents: payout.amount_cents, payout_id: payout.id };
  try {
    const { transferId } = await ctx.payments.transfer({
      accountId,
      amountCents: payout.amount_cents,
      idempotencyKey: `payout:${payout.id}`,
      payoutId: payout.id,
    });
    const now = ctx.clock.now();
    await ctx.db.transaction().execute(async (trx) => {
      const paid = await trx
        .updateTable('payouts')
        .set({ status: 'paid', transfer_id: transferId, completed_at: now })
        .where('id', '=', payout.id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(paid.numUpdatedRows) === 1)
        await emitEvent(
          trx,
          {
            orgId: payout.provider_org_id,
            type: 'payout.paid',
            data: {
              payout_id: payout.id,
              period: payout.period,
              amount_cents: payout.amount_cents,
              transfer_id: transferId,
            },
            dedupeKey: payout.id,
          },
          now,
        );
    });
    return { ...base, outcome: 'paid', transfer_id: transferId };
  } catch (e) {
    const reason = (e instanceof Error ? e.message : String(e)).slice(0, 200);
    const now = ctx.clock.now();
    await ctx.db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('payouts')
        .set({ status: 'failed', failure_reason: reason, completed_at: now })
        .where('id', '=', payout.id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return;
      await trx
        .insertInto('provider_earnings')
        .values({
          id: newId('prv', now),
          provider_org_id: payout.provider_org_id,
          api_id: null,
          kind: 'reversal',
          gross_cents: 0,
          fee_cents: 0,
          net_cents: payout.amount_cents,
          ref_id: payout.id,
          idempotency_key: `payout_reversal:${payout.id}`,
          created_at: now,
        })
        .onConflict((oc) => oc.column('idempotency_key').where(sql<boolean>`kind <> 'earning'`).doNothing()) // the partial unique index (0005); a literal, so SQLite can match it
        .execute();
    });
    return { ...base, outcome: 'failed', reason };
  }
}

/** @internal The payout job and `svc-admin payouts run` (the operator). */
export async function runPayouts(
  ctx: BillingCtx,
  period: string = previousPeriod(ctx.clock.now()),
): Promise<PayoutRunItem[]> {
  const cutoff = Math.min(periodEnd(period), ctx.clock.now());
  const min = ctx.config.billing.payoutMinCents;
  const out: PayoutRunItem[] = [];
  // Crash recovery first: a payout written long enough ago that its run must have died before recording the
  // transfer. Retrying reuses the transfer's idempotency key, so the processor never pays it twice.
  const stale = ctx.clock.now() - STALE_PENDING_MS;
  const pending = await ctx.db
    .selectFrom('payouts')
    .innerJoin('connect_accounts as c', 'c.org_id', 'payouts.provider_org_id')
    .selectAll('payouts')
    .select('c.account_id')
    .where('payouts.status', '=', 'pending')
    .where('payouts.created_at', '<', stale)
    .execute();
  for (const p of pending) out.push(await transferAndSettle(ctx, p, p.account_id));

  const providers = await ctx.db.selectFrom('provider_earnings').select('provider_org_id').distinct().execute();
  for (const { provider_org_id: orgId } of providers) {
    const acct = await ctx.db.selectFrom('connect_accounts').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    const now = ctx.clock.now();
    const claimed = await ctx.db.transaction().execute(async (trx): Promise<Row<'payouts'> | PayoutRunItem> => {
      const amount = await payableCents(trx, orgId, cutoff);
      const done = await trx
        .selectFrom('payouts')
        .select('id')
        .where('provider_org_id', '=', orgId)
        .where('period', '=', period)
        .executeTakeFirst();
      if (done) return { provider_org_id: orgId, outcome: 'already_done', amount_cents: 0, payout_id: done.id };
      if (amount < min) return { provider_org_id: orgId, outcome: 'below_minimum', amount_cents: Math.max(amount, 0) };
      if (!acct || acct.processor !== ctx.payments.kind)
        return { provider_org_id: orgId, outcome: 'no_account', amount_cents: amount };
      if (!acct.payouts_enabled) return { provider_org_id: orgId, outcome: 'payouts_disabled', amount_cents: amount };
      const payout: Row<'payouts'> = {
        id: newId('po', now),
        provider_org_id: orgId,
        period,
        amount_cents: amount,
        status: 'pending',
        transfer_id: null,
        failure_reason: null,
        created_at: now,
        completed_at: null,
      };
      await trx.insertInto('payouts').values(payout).execute();
      await trx
        .insertInto('provider_earnings')
        .values({
          id: newId('prv', now),
          provider_org_id: orgId,
          api_id: null,
          kind: 'payout',
          gross_cents: 0,
          fee_cents: 0,
          net_cents: -amount,
          ref_id: payout.id,
          idempotency_key: `payout:${payout.id}`,
          created_at: now,
        })
        .execute();
      return payout;
    });
    if ('outcome' in claimed) {
      out.push(claimed);
      continue;
    }
    out.push(await transferAndSettle(ctx, claimed, acct!.account_id));
  }
  return out;
}

/** @public A serialiser: no processor secret leaves. */
export function toPayoutResource(p: Row<'payouts'>) {
  return {
    id: p.id,
    period: p.period,
    amount_cents: p.amount_cents,
    status: p.status,
    transfer_id: p.transfer_id,
    failure_reason: p.failure_reason,
    created_at: new Date(p.created_at).toISOString(),
    completed_at: p.completed_at === null ? null : new Date(p.completed_at).toISOString(),
  };
}

/** What a provider sees about getting paid: its connected account, earnings to date and its latest 100 payouts. */
export async function providerPayouts(db: Db, caller: Principal | undefined): Promise<ProviderPayouts> {
  const { orgId: providerOrgId } = assertScope(caller, 'provider:write');
  const payouts = await db
    .selectFrom('payouts')
    .selectAll()
    .where('provider_org_id', '=', providerOrgId)
    .orderBy('created_at', 'desc')
    .limit(100)
    .execute();
  return {
    account: toConnectResource(await getConnectAccount(db, providerOrgId)),
    earnings: await earningsSummary(db, providerOrgId),
    payouts: payouts.map(toPayoutResource),
  };
}
