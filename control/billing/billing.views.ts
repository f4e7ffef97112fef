/**
 * Read views shared by every surface (REST routes, MCP tools): the org's billing status and the pack list.
 * Explicit serialisers: no row leaves as-is (customer and payment-method ids stay inside).
 */
import type { Config } from '../../core/config.js';
import { getBalance } from '../ledger/ledger.service.js';
import { getAccount } from './billing.repo.js';
import { paymentsMode, type BillingCtx } from './payments.js';
import type { Balance } from '../../core/schemas/billing.schemas.js';

export async function billingStatus(ctx: BillingCtx, orgId: string): Promise<Balance> {
  const bal = await getBalance(ctx.db, orgId);
  const acc = await getAccount(ctx.db, orgId);
  // A card saved under the other back-end cannot be charged by this one.
  const card =
    acc?.payment_method_id && acc.processor === ctx.payments.kind
      ? { brand: acc.card_brand, last4: acc.card_last4 }
      : null;
  return {
    org_id: orgId,
    credit_cents: bal.credit_cents,
    pending_cents: bal.pending_cents,
    reserved_cents: bal.reserved_cents,
    available_cents: bal.credit_cents - bal.reserved_cents,
    payments_mode: paymentsMode(ctx),
    card_on_file: card !== null,
    card,
    auto_reload: {
      enabled: acc?.auto_reload_enabled === 1,
      threshold_cents: acc?.auto_reload_threshold_cents ?? null,
      amount_cents: acc?.auto_reload_amount_cents ?? null,
      failures: acc?.auto_reload_failures ?? 0,
      paused: acc?.auto_reload_paused_at != null,
    },
  };
}

export function packsView(config: Readonly<Config>) {
  const { packs, checkoutMinCents, checkoutMaxCents } = config.billing;
  return {
    data: packs.map((p) => ({
      id: p.id,
      name: p.name,
      price_cents: p.price_cents,
      credit_cents: p.credit_cents,
      bonus_cents: p.credit_cents - p.price_cents,
    })),
    custom_amount: { min_cents: checkoutMinCents, max_cents: checkoutMaxCents },
  };
}
