/**
 * Buying credits: packs and custom amounts become a `payments` row plus a hosted checkout; a paid payment
 * becomes exactly one ledger entry (`purchase:{payment id}` or `auto_reload:{payment id}`), whoever reports it first.
 */
import { emitEvent } from '../webhooks/events.js';
import type { BillingCtx } from './payments.js';
import type { CreditPack } from '../../core/config.js';
import type { Db, Row } from '../../core/db/database.js';
import { SvcError } from '../../core/errors.js';
import { formatCents } from '../../core/money.js';
import { postEntry } from '../ledger/ledger.service.js';
import { ensureAccount, newOpenPayment } from './billing.repo.js';
import { assertScope, type Principal } from '../auth/principal.js';

export type CheckoutRequest = { pack: string; amount_cents?: undefined } | { pack?: undefined; amount_cents: number };

export interface PricedCheckout {
  pack: CreditPack | null;
  amountCents: number;
  creditCents: number;
}

/**
 * Resolves a request to what is paid and what is credited: packs carry their bonus, custom amounts are 1:1.
 * @public Pure: the price and credit of a pack or amount, the same for everyone.
 */
export function priceCheckout(
  ctx: BillingCtx,
  req: { pack?: string | undefined; amount_cents?: number | undefined },
): PricedCheckout {
  const { packs, checkoutMinCents, checkoutMaxCents } = ctx.config.billing;
  if ((req.pack === undefined) === (req.amount_cents === undefined)) {
    throw new SvcError('validation_failed', 'Send exactly one of `pack` or `amount_cents`', {
      errors: [{ path: 'pack', message: 'exactly one of pack or amount_cents' }],
    });
  }
  if (req.pack !== undefined) {
    const pack = packs.find((p) => p.id === req.pack);
    if (!pack) {
      throw new SvcError('validation_failed', `Unknown pack "${req.pack}"; see GET /v1/billing/packs`, {
        errors: [{ path: 'pack', message: `one of ${packs.map((p) => p.id).join(', ')}` }],
      });
    }
    return { pack, amountCents: pack.price_cents, creditCents: pack.credit_cents };
  }
  const amount = req.amount_cents!;
  if (amount < checkoutMinCents || amount > checkoutMaxCents) {
    throw new SvcError(
      'validation_failed',
      `amount_cents must be between ${checkoutMinCents} and ${checkoutMaxCents}`,
      {
        errors: [{ path: 'amount_cents', message: `between ${checkoutMinCents} and ${checkoutMaxCents}` }],
      },
    );
  }
  return { pack: null, amountCents: amount, creditCents: amount };
}

/**
 * The processor customer of an org, created on first need (outside any transaction: it is a network call).
 * @internal A step of startCheckout and startCardSetup, which authorize.
 */
export async function ensureCustomer(
  ctx: BillingCtx,
  orgId: string,
): Promise<Row<'billing_accounts'> & { customer_id: string }> {
  const now = ctx.clock.now();
  const account = await ensureAccount(ctx.db, orgId, ctx.payments.kind, now);
  if (account.customer_id) return { ...account, customer_id: account.customer_id };
  const org = await ctx.db.selectFrom('orgs').select('email').where('id', '=', orgId).executeTakeFirst();
  const customerId = await ctx.payments.createCustomer({ orgId, email: org?.email ?? null });
  await ctx.db
    .updateTable('billing_accounts')
    .set({ customer_id: customerId, updated_at: now })
    .where('org_id', '=', orgId)
    .where('customer_id', 'is', null)
    .execute();
  const fresh = await ensureAccount(ctx.db, orgId, ctx.payments.kind, now);
  return { ...fresh, customer_id: fresh.customer_id ?? customerId };
}

export interface StartedCheckout {
  payment: Row<'payments'>;
  url: string;
  priced: PricedCheckout;
}

export async function startCheckout(
  ctx: BillingCtx,
  caller: Principal | undefined,
  req: { pack?: string; amount_cents?: number },
  baseUrl: string,
): Promise<StartedCheckout> {
  const { orgId } = assertScope(caller, 'billing:write');
  const priced = priceCheckout(ctx, req);
  const account = await ensureCustomer(ctx, orgId);
  const now = ctx.clock.now();
  const payment = newOpenPayment(
    {
      orgId,
      kind: 'checkout',
      processor: ctx.payments.kind,
      packId: priced.pack?.id ?? null,
      amountPaidCents: priced.amountCents,
      creditCents: priced.creditCents,
    },
    now,
  );
  // The row exists before the processor knows the session, so a fast webhook always finds it (metadata.payment_id).
  await ctx.db.insertInto('payments').values(payment).execute();
  const description = priced.pack
    ? `svc credits: ${priced.pack.name} (${formatCents(priced.creditCents)})`
    : `svc credits (${formatCents(priced.creditCents)})`;
  try {
    const session = await ctx.payments.createCheckout({
      paymentId: payment.id,
      orgId,
      customerId: account.customer_id,
      amountCents: priced.amountCents,
      creditCents: priced.creditCents,
      description,
      baseUrl,
    });
    await ctx.db.updateTable('payments').set({ processor_ref: session.ref }).where('id', '=', payment.id).execute();
    return { payment: { ...payment, processor_ref: session.ref }, url: session.url, priced };
  } catch (e) {
    await ctx.db
      .updateTable('payments')
      .set({ status: 'failed', failure_reason: 'checkout could not be created', completed_at: ctx.clock.now() })
      .where('id', '=', payment.id)
      .where('status', '=', 'open')
      .execute();
    throw e;
  }
}

/**
 * Credits a paid payment, exactly once: the ledger idempotency key is per payment, so a redelivered webhook,
 * a second event type for the same payment, or the synchronous auto-reload path all land on one entry.
 * A payment first marked failed/expired is still credited when the processor later reports it paid.
 * @internal Applied from a verified processor event or the auto-reload job.
 */
export async function creditPaidPayment(trx: Db, payment: Row<'payments'>, now: number): Promise<{ applied: boolean }> {
  await trx
    .updateTable('payments')
    .set({ status: 'succeeded', completed_at: now, failure_reason: null })
    .where('id', '=', payment.id)
    .where('status', '!=', 'succeeded')
    .execute();
  const kind = payment.kind === 'auto_reload' ? 'auto_reload' : 'purchase';
  const result = await postEntry(
    trx,
    {
      orgId: payment.org_id,
      kind,
      amountCents: payment.credit_cents,
      reason:
        kind === 'auto_reload'
          ? `Auto-reload ${formatCents(payment.amount_paid_cents)}`
          : payment.pack_id
            ? `Credit pack ${payment.pack_id}`
            : `Credit purchase ${formatCents(payment.amount_paid_cents)}`,
      refType: 'payment',
      refId: payment.id,
      idempotencyKey: `${kind}:${payment.id}`,
    },
    now,
  );
  if (result.applied)
    await emitEvent(
      trx,
      {
        orgId: payment.org_id,
        type: 'payment.succeeded',
        data: {
          payment_id: payment.id,
          kind,
          amount_paid_cents: payment.amount_paid_cents,
          credit_cents: payment.credit_cents,
        },
        dedupeKey: payment.id,
      },
      now,
    );
  return { applied: result.applied };
}
