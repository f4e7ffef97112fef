/**
 * Auto-reload: a control-plane job reads `balances` (which the gateway writes directly) and charges the saved
 * card off-session when an org sits under its threshold. One dip charges at most once: the payment's unique
 * `trigger_ref` is `reload:{org}:{last top-up entry}:{attempt}`, and a successful reload is itself a new top-up.
 */
import { sql } from 'kysely';
import type { BillingCtx, ChargeResult } from './payments.js';
import type { Db, Row } from '../../core/db/database.js';
import { failOpenPayment, newOpenPayment } from './billing.repo.js';
import { creditPaidPayment } from './checkout.service.js';

/** Entry kinds that add money: the newest of them identifies the current "dip" (epoch between top-ups). */
const TOP_UP_KINDS = ['purchase', 'auto_reload', 'adjustment', 'signup_credit', 'starter_credit'] as const;

/** An auto-reload charge still `open` after this long was interrupted (the processor call times out far sooner). */
const STALE_OPEN_MS = 10 * 60_000;

export interface ReloadResult {
  org_id: string;
  payment_id: string;
  outcome: 'credited' | 'failed';
  reason?: string;
}

/**
 * Counts a failed off-session charge once per payment, pausing auto-reload after the configured streak.
 * @internal Applied from a verified processor event (webhooks.service.ts), not for a caller.
 */
export async function recordChargeFailure(
  ctx: BillingCtx,
  trx: Db,
  payment: Row<'payments'>,
  reason: string,
  now: number,
): Promise<boolean> {
  const changed = await failOpenPayment(trx, payment.id, 'failed', reason, now);
  if (!changed) return false;
  const max = ctx.config.billing.autoReloadMaxFailures;
  await trx
    .updateTable('billing_accounts')
    .set({
      auto_reload_failures: sql`auto_reload_failures + 1`,
      auto_reload_paused_at: sql`CASE WHEN auto_reload_failures + 1 >= ${max} THEN ${now} ELSE auto_reload_paused_at END`,
      updated_at: now,
    })
    .where('org_id', '=', payment.org_id)
    .execute();
  return true;
}

/** Claims the current dip of one org: returns the new open payment, or null when nothing is due. */
async function claimDip(
  ctx: BillingCtx,
  orgId: string,
): Promise<{ payment: Row<'payments'>; account: Row<'billing_accounts'> } | null> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const account = await trx.selectFrom('billing_accounts').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    if (
      !account ||
      !account.auto_reload_enabled ||
      account.auto_reload_paused_at !== null ||
      !account.payment_method_id ||
      !account.customer_id
    )
      return null;
    if (
      account.processor !== ctx.payments.kind ||
      account.auto_reload_threshold_cents === null ||
      !account.auto_reload_amount_cents
    )
      return null;
    const bal = await trx.selectFrom('balances').select('credit_cents').where('org_id', '=', orgId).executeTakeFirst();
    if ((bal?.credit_cents ?? 0) >= account.auto_reload_threshold_cents) return null;
    const inFlight = await trx
      .selectFrom('payments')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('kind', '=', 'auto_reload')
      .where('status', '=', 'open')
      .executeTakeFirst();
    if (inFlight) {
      // An open reload this old means a sweep died mid-charge. Count it as failed (a late payment_intent.succeeded
      // still credits it) and let the next sweep retry; never start a second charge while one may be in flight.
      if (inFlight.created_at < now - STALE_OPEN_MS)
        await recordChargeFailure(ctx, trx, inFlight, 'interrupted: outcome unknown', now);
      return null;
    }
    const topUp = await trx
      .selectFrom('ledger_entries')
      .select('id')
      .where('org_id', '=', orgId)
      .where('status', '=', 'settled')
      .where('amount_cents', '>', 0)
      .where('kind', 'in', TOP_UP_KINDS)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    const dip = `reload:${orgId}:${topUp?.id ?? 'none'}:`;
    // Attempt index within this dip: failed attempts (up to the pause) and a re-enable after a pause retry it.
    const attempts = await trx
      .selectFrom('payments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .where(sql<string>`substr(trigger_ref, 1, ${dip.length})`, '=', dip)
      .executeTakeFirstOrThrow();
    const payment = newOpenPayment(
      {
        orgId,
        kind: 'auto_reload',
        processor: ctx.payments.kind,
        amountPaidCents: account.auto_reload_amount_cents,
        creditCents: account.auto_reload_amount_cents,
        triggerRef: `${dip}${Number(attempts.n)}`,
      },
      now,
    );
    // UNIQUE(trigger_ref): a second process claiming the same dip inserts nothing.
    const r = await trx
      .insertInto('payments')
      .values(payment)
      .onConflict((oc) => oc.column('trigger_ref').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0 ? { payment, account } : null;
  });
}

/** @internal The auto-reload job charges the card the org saved; no caller. */
export async function reloadOrg(ctx: BillingCtx, orgId: string): Promise<ReloadResult | null> {
  const claim = await claimDip(ctx, orgId);
  if (!claim) return null;
  const { payment, account } = claim;
  let result: ChargeResult;
  try {
    result = await ctx.payments.chargeOffSession({
      paymentId: payment.id,
      orgId,
      customerId: account.customer_id!,
      paymentMethodId: account.payment_method_id!,
      amountCents: payment.amount_paid_cents,
      idempotencyKey: `auto_reload:${payment.id}`,
    });
  } catch (e) {
    // Unknown outcome: counted as a failure; if the charge did go through, payment_intent.succeeded credits it later.
    result = { ok: false, ref: null, reason: e instanceof Error ? e.message.slice(0, 200) : 'processor error' };
  }
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    if (result.ref)
      await trx
        .updateTable('payments')
        .set({ processor_ref: result.ref })
        .where('id', '=', payment.id)
        .where('processor_ref', 'is', null)
        .execute();
    if (result.ok) {
      await creditPaidPayment(trx, payment, now);
      await trx
        .updateTable('billing_accounts')
        .set({ auto_reload_failures: 0, updated_at: now })
        .where('org_id', '=', orgId)
        .execute();
      return { org_id: orgId, payment_id: payment.id, outcome: 'credited' as const };
    }
    await recordChargeFailure(ctx, trx, payment, result.reason, now);
    return { org_id: orgId, payment_id: payment.id, outcome: 'failed' as const, reason: result.reason };
  });
}

/**
 * One pass over every org that is due; orgs are handled one by one so a slow processor call holds no lock.
 * @internal The auto-reload job (billing.jobs.ts).
 */
export async function runAutoReload(ctx: BillingCtx): Promise<ReloadResult[]> {
  const due = await ctx.db
    .selectFrom('billing_accounts as a')
    .innerJoin('balances as b', 'b.org_id', 'a.org_id')
    .innerJoin('orgs as o', 'o.id', 'a.org_id')
    .select('a.org_id')
    .where('o.status', '=', 'active')
    .where('a.auto_reload_enabled', '=', 1)
    .where('a.auto_reload_paused_at', 'is', null)
    .where('a.payment_method_id', 'is not', null)
    .whereRef('b.credit_cents', '<', 'a.auto_reload_threshold_cents')
    .execute();
  const out: ReloadResult[] = [];
  for (const { org_id } of due) {
    const r = await reloadOrg(ctx, org_id);
    if (r) out.push(r);
  }
  return out;
}
