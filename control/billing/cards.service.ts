/**
 * Card on file and auto-reload settings: card setup (a human confirms it on a hosted page), the billing portal,
 * saving a confirmed card, and the auto-reload switch. A card never lets the balance go negative (docs/billing.md).
 */
import type { BillingCtx, CardInfo } from './payments.js';
import type { Db, Row } from '../../core/db/database.js';
import type { AutoReloadInput } from '../../core/schemas/billing.schemas.js';
import { SvcError } from '../../core/errors.js';
import { ensureCustomer } from './checkout.service.js';
import { newOpenPayment } from './billing.repo.js';
import { assertScope, type Principal } from '../auth/principal.js';

export async function startCardSetup(
  ctx: BillingCtx,
  caller: Principal | undefined,
  baseUrl: string,
): Promise<{ payment: Row<'payments'>; url: string }> {
  const { orgId } = assertScope(caller, 'billing:write');
  const account = await ensureCustomer(ctx, orgId);
  const now = ctx.clock.now();
  const payment = newOpenPayment({ orgId, kind: 'setup', processor: ctx.payments.kind }, now);
  await ctx.db.insertInto('payments').values(payment).execute();
  const setup = await ctx.payments.createCardSetup({
    paymentId: payment.id,
    orgId,
    customerId: account.customer_id,
    baseUrl,
  });
  await ctx.db.updateTable('payments').set({ processor_ref: setup.ref }).where('id', '=', payment.id).execute();
  return { payment: { ...payment, processor_ref: setup.ref }, url: setup.url };
}

/**
 * Stores a confirmed card as the org's card on file, unless a card from a newer setup is already there (events
 * arrive in any order). A new card also lifts an auto-reload pause and clears the failure count: the pause
 * exists because the old card kept failing. Returns the org, and whether the card was taken.
 * @internal Applied from a verified processor event (webhooks.service.ts).
 */
export async function saveCard(
  trx: Db,
  customerId: string,
  paymentMethodId: string,
  card: CardInfo,
  setupCreatedAt: number,
  now: number,
): Promise<{ orgId: string; saved: boolean } | null> {
  const account = await trx
    .selectFrom('billing_accounts')
    .select(['org_id', 'card_setup_created_at'])
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  if (!account) return null;
  if (account.card_setup_created_at !== null && account.card_setup_created_at > setupCreatedAt)
    return { orgId: account.org_id, saved: false };
  await trx
    .updateTable('billing_accounts')
    .set({
      payment_method_id: paymentMethodId,
      card_brand: card.brand,
      card_last4: card.last4,
      card_setup_created_at: setupCreatedAt,
      auto_reload_failures: 0,
      auto_reload_paused_at: null,
      updated_at: now,
    })
    .where('org_id', '=', account.org_id)
    .execute();
  return { orgId: account.org_id, saved: true };
}

/** @internal Applied from a processor event (the test-payments processor pages). */
export async function removeCard(trx: Db, orgId: string, now: number): Promise<void> {
  await trx
    .updateTable('billing_accounts')
    .set({ payment_method_id: null, card_brand: null, card_last4: null, auto_reload_enabled: 0, updated_at: now })
    .where('org_id', '=', orgId)
    .execute();
}

export async function openPortal(
  ctx: BillingCtx,
  caller: Principal | undefined,
  baseUrl: string,
): Promise<{ url: string }> {
  const { orgId } = assertScope(caller, 'billing:write');
  const account = await ensureCustomer(ctx, orgId);
  return ctx.payments.createPortal({ orgId, customerId: account.customer_id, baseUrl });
}

/** One value from a field and its deprecated alias; both sent and different is a validation error. */
function withAlias(input: AutoReloadInput, field: 'threshold_cents' | 'amount_cents'): number | undefined {
  const alias = field === 'threshold_cents' ? 'threshold' : 'amount';
  const [value, old] = [input[field], input[alias]];
  if (value !== undefined && old !== undefined && value !== old) {
    throw new SvcError('validation_failed', `Send ${field} or its deprecated alias ${alias}, not both`, {
      errors: [{ path: alias, message: `conflicts with ${field}` }],
    });
  }
  return value ?? old;
}

/** Enabling needs a card on file and both numbers (given now or kept from before); it resets pause and failures. */
export async function setAutoReload(
  ctx: BillingCtx,
  caller: Principal | undefined,
  input: AutoReloadInput,
): Promise<void> {
  const { orgId } = assertScope(caller, 'billing:write');
  const now = ctx.clock.now();
  const { checkoutMinCents, checkoutMaxCents } = ctx.config.billing;
  const inputThreshold = withAlias(input, 'threshold_cents');
  const inputAmount = withAlias(input, 'amount_cents');
  if (inputAmount !== undefined && (inputAmount < checkoutMinCents || inputAmount > checkoutMaxCents)) {
    const path = input.amount_cents !== undefined ? 'amount_cents' : 'amount';
    throw new SvcError(
      'validation_failed',
      `${path} must be between ${checkoutMinCents} and ${checkoutMaxCents} cents`,
      {
        errors: [{ path, message: `between ${checkoutMinCents} and ${checkoutMaxCents}` }],
      },
    );
  }
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('billing_accounts')
      .values({
        org_id: orgId,
        processor: ctx.payments.kind,
        customer_id: null,
        payment_method_id: null,
        card_brand: null,
        card_last4: null,
        auto_reload_threshold_cents: null,
        auto_reload_amount_cents: null,
        auto_reload_paused_at: null,
        updated_at: now,
      })
      .onConflict((oc) => oc.column('org_id').doNothing())
      .execute();
    const acc = await trx
      .selectFrom('billing_accounts')
      .selectAll()
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow();
    const threshold = inputThreshold ?? acc.auto_reload_threshold_cents;
    const amount = inputAmount ?? acc.auto_reload_amount_cents;
    if (input.enabled) {
      if (!acc.payment_method_id || acc.processor !== ctx.payments.kind) {
        throw new SvcError('card_required', 'Auto-reload charges a saved card: add one first (POST /v1/billing/setup)');
      }
      if (threshold === null || amount === null) {
        throw new SvcError('validation_failed', 'Enabling auto-reload needs `threshold` and `amount` (cents)', {
          errors: [{ path: threshold === null ? 'threshold' : 'amount', message: 'required when enabling' }],
        });
      }
    }
    await trx
      .updateTable('billing_accounts')
      .set({
        auto_reload_enabled: input.enabled ? 1 : 0,
        auto_reload_threshold_cents: threshold,
        auto_reload_amount_cents: amount,
        ...(input.enabled ? { auto_reload_failures: 0, auto_reload_paused_at: null } : {}),
        updated_at: now,
      })
      .where('org_id', '=', orgId)
      .execute();
  });
}
