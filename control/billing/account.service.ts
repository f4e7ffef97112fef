/**
 * Read views shared by every surface (REST routes, MCP tools, pages): the org's billing status, its payments and
 * the pack list. Explicit serialisers: no row leaves as-is (customer and payment-method ids stay inside).
 */
import type { Config } from '../../core/config.js';
import type { Db, Row } from '../../core/db/database.js';
import { getBalance } from '../ledger/ledger.service.js';
import { getAccount, iso, listPayments } from './billing.repo.js';
import { paymentsMode, type BillingCtx } from './payments.js';
import type { Balance, Payment } from '../../core/schemas/billing.schemas.js';
import { pageOf, type Page } from '../lib/pagination.js';
import { assertAuthenticated, type Principal } from '../auth/principal.js';

/** Any credential of the org reads its balance (SPEC: balance needs no extra scope). */
export async function billingStatus(ctx: BillingCtx, caller: Principal | undefined): Promise<Balance> {
  const { orgId } = assertAuthenticated(caller);
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

/** @public The credit packs on sale: the same for everyone (REST still asks for a credential, as before). */
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

/** The org's payments, newest first, one page. */
export async function paymentsPage(
  db: Db,
  caller: Principal | undefined,
  limit: number,
  offset: number,
): Promise<Page<Payment>> {
  const { orgId } = assertAuthenticated(caller);
  const rows = await listPayments(db, orgId, limit + 1, offset);
  return pageOf(rows.map(toPayment), limit, offset);
}

function toPayment(p: Row<'payments'>): Payment {
  return {
    id: p.id,
    kind: p.kind,
    processor: p.processor,
    status: p.status,
    pack: p.pack_id,
    amount_cents: p.amount_paid_cents,
    credit_cents: p.credit_cents,
    failure_reason: p.failure_reason,
    created_at: iso(p.created_at)!,
    completed_at: iso(p.completed_at),
  };
}
