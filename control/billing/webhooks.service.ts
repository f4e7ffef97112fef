/**
 * Applies verified processor events exactly once: the event id goes into `processor_events` in the same
 * transaction as its effects, so a redelivery finds it and changes nothing. Effects are written to be
 * order-independent (credits are keyed per payment, failures never downgrade a success, accounts are re-read).
 */
import type { BillingCtx, BillingEvent, VerifiedEvent } from './payments.js';
import type { Db } from '../../core/db/database.js';
import { failOpenPayment, findPayment } from './billing.repo.js';
import { creditPaidPayment } from './checkout.service.js';
import { saveCard } from './cards.service.js';
import { recordChargeFailure } from './auto-reload.service.js';

export interface WebhookOutcome {
  event_id: string;
  duplicate: boolean;
  outcome: string;
}

/** @public The processor calls it; its credential is the Stripe-Signature it verifies. */
export async function handleStripeWebhook(
  ctx: BillingCtx,
  rawBody: string,
  signature: string | undefined,
): Promise<WebhookOutcome> {
  // Verification and any processor reads happen before the write lock is taken.
  const verified = await ctx.payments.verifyWebhook(rawBody, signature);
  return applyVerifiedEvent(ctx, verified);
}

/** @internal An event already verified (a webhook, or the test-payments processor pages). */
export async function applyVerifiedEvent(ctx: BillingCtx, v: VerifiedEvent): Promise<WebhookOutcome> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const seen = await trx.selectFrom('processor_events').select('outcome').where('id', '=', v.id).executeTakeFirst();
    if (seen) return { event_id: v.id, duplicate: true, outcome: seen.outcome };
    const outcome = await applyEvent(ctx, trx, v.event, now);
    await trx.insertInto('processor_events').values({ id: v.id, type: v.type, received_at: now, outcome }).execute();
    return { event_id: v.id, duplicate: false, outcome };
  });
}

async function applyEvent(ctx: BillingCtx, trx: Db, e: BillingEvent, now: number): Promise<string> {
  switch (e.kind) {
    case 'checkout_paid': {
      const payment = await findPayment(trx, { id: e.paymentId, ref: e.sessionRef });
      if (!payment || payment.kind !== 'checkout') return 'unknown_payment';
      const r = await creditPaidPayment(trx, payment, now);
      return r.applied ? 'credited' : 'already_credited';
    }
    case 'checkout_unpaid':
      return 'awaiting_payment';
    case 'checkout_failed': {
      const payment = await findPayment(trx, { id: e.paymentId, ref: e.sessionRef });
      if (!payment) return 'unknown_payment';
      const changed = await failOpenPayment(
        trx,
        payment.id,
        e.reason === 'expired' ? 'expired' : 'failed',
        e.reason,
        now,
      );
      return changed ? `payment_${e.reason}` : 'no_change';
    }
    case 'setup_succeeded': {
      const r = await saveCard(trx, e.customerId, e.paymentMethodId, e.card, e.setupCreatedAt, now);
      if (!r) return 'unknown_customer';
      await trx
        .updateTable('payments')
        .set({ status: 'succeeded', completed_at: now })
        .where('org_id', '=', r.orgId)
        .where('kind', '=', 'setup')
        .where('status', '=', 'open')
        .execute();
      return r.saved ? 'card_saved' : 'newer_card_kept';
    }
    case 'card_removed': {
      const r = await trx
        .updateTable('billing_accounts')
        .set({ payment_method_id: null, card_brand: null, card_last4: null, auto_reload_enabled: 0, updated_at: now })
        .where('payment_method_id', '=', e.paymentMethodId)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0 ? 'card_removed' : 'no_change';
    }
    case 'charge_succeeded': {
      const payment = await findPayment(trx, { id: e.paymentId, ref: e.chargeRef });
      if (!payment || payment.kind !== 'auto_reload') return 'unknown_payment';
      const r = await creditPaidPayment(trx, payment, now);
      await trx
        .updateTable('billing_accounts')
        .set({ auto_reload_failures: 0, updated_at: now })
        .where('org_id', '=', payment.org_id)
        .execute();
      return r.applied ? 'credited' : 'already_credited';
    }
    case 'charge_failed': {
      const payment = await findPayment(trx, { id: e.paymentId, ref: e.chargeRef });
      if (!payment || payment.kind !== 'auto_reload') return 'unknown_payment';
      const counted = await recordChargeFailure(ctx, trx, payment, e.reason, now);
      return counted ? 'charge_failed' : 'no_change';
    }
    case 'account_updated': {
      const r = await trx
        .updateTable('connect_accounts')
        .set({
          details_submitted: e.detailsSubmitted ? 1 : 0,
          payouts_enabled: e.payoutsEnabled ? 1 : 0,
          updated_at: now,
        })
        .where('account_id', '=', e.accountId)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0 ? 'account_updated' : 'unknown_account';
    }
    case 'ignored':
      return 'ignored';
  }
}
