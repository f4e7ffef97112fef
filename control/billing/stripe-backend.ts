/**
 * The Stripe back-end: hosted Checkout (payment and setup modes), the customer portal, off-session
 * PaymentIntents, Connect accounts (controller properties, not the deprecated `type: 'express'`) and transfers.
 * Webhooks are verified with `webhooks.constructEvent` and normalised into BillingEvents here.
 */
import Stripe from 'stripe';
import { SvcError } from '../../core/errors.js';
import type { BillingEvent, CardInfo, PaymentsBackend, VerifiedEvent } from './payments.js';

export interface StripeBackendOptions {
  secretKey: string;
  webhookSecret: string | undefined;
  /** e.g. `http://127.0.0.1:12345` for a local fake; unset means api.stripe.com. */
  apiBase: string | undefined;
  maxNetworkRetries: number;
}

export function stripeClient(opts: StripeBackendOptions): Stripe {
  const config: ConstructorParameters<typeof Stripe>[1] = {
    maxNetworkRetries: opts.maxNetworkRetries,
    timeout: 20_000,
  };
  if (opts.apiBase) {
    const u = new URL(opts.apiBase);
    config.host = u.hostname;
    config.port = u.port || (u.protocol === 'https:' ? 443 : 80);
    config.protocol = u.protocol === 'https:' ? 'https' : 'http';
  }
  return new Stripe(opts.secretKey, config);
}

/** Stripe's failures become `payment_backend_error` (502) at our edge; card declines are returned, not thrown. */
function backendError(e: unknown): SvcError {
  const msg = e instanceof Error ? e.message : String(e);
  return new SvcError('payment_backend_error', `Stripe request failed: ${msg}`, { cause: e });
}

async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof SvcError) throw e;
    throw backendError(e);
  }
}

function idOf(v: string | { id: string } | null | undefined): string | null {
  if (!v) return null;
  return typeof v === 'string' ? v : v.id;
}

function metaPaymentId(meta: Record<string, string> | null | undefined): string | null {
  return meta?.payment_id ?? null;
}

// Long: the PaymentsBackend is one closure over one Stripe client; the event normaliser and each backend method inside
// it are short.
export function createStripeBackend(opts: StripeBackendOptions): PaymentsBackend {
  const stripe = stripeClient(opts);

  async function cardOf(paymentMethodId: string): Promise<CardInfo> {
    const pm = await stripe.paymentMethods.retrieve(paymentMethodId);
    return { brand: pm.card?.brand ?? null, last4: pm.card?.last4 ?? null };
  }

  async function normalise(event: Stripe.Event): Promise<BillingEvent> {
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded': {
        const s = event.data.object;
        if (s.mode !== 'payment') return { kind: 'ignored' };
        const paid = s.payment_status === 'paid' || s.payment_status === 'no_payment_required';
        return {
          kind: paid ? 'checkout_paid' : 'checkout_unpaid',
          sessionRef: s.id,
          paymentId: metaPaymentId(s.metadata),
        };
      }
      case 'checkout.session.expired':
      case 'checkout.session.async_payment_failed': {
        const s = event.data.object;
        return {
          kind: 'checkout_failed',
          sessionRef: s.id,
          paymentId: metaPaymentId(s.metadata),
          reason: event.type.split('.').pop() ?? 'failed',
        };
      }
      case 'setup_intent.succeeded': {
        const si = event.data.object;
        const customerId = idOf(si.customer);
        const pmId = idOf(si.payment_method);
        if (!customerId || !pmId) return { kind: 'ignored' };
        return {
          kind: 'setup_succeeded',
          customerId,
          paymentMethodId: pmId,
          card: await cardOf(pmId),
          setupRef: si.id,
          setupCreatedAt: Number.isFinite(si.created) ? si.created * 1000 : 0,
        };
      }
      case 'payment_method.detached':
        // Removed in the billing portal: it can no longer be charged off-session.
        return { kind: 'card_removed', paymentMethodId: event.data.object.id };
      case 'payment_intent.succeeded': {
        const pi = event.data.object;
        if (pi.metadata?.kind !== 'auto_reload') return { kind: 'ignored' };
        return { kind: 'charge_succeeded', chargeRef: pi.id, paymentId: metaPaymentId(pi.metadata) };
      }
      case 'payment_intent.payment_failed': {
        const pi = event.data.object;
        if (pi.metadata?.kind !== 'auto_reload') return { kind: 'ignored' };
        const reason = pi.last_payment_error?.code ?? pi.last_payment_error?.message ?? 'payment_failed';
        return { kind: 'charge_failed', chargeRef: pi.id, paymentId: metaPaymentId(pi.metadata), reason };
      }
      case 'account.updated': {
        // Re-read the account so an older event delivered late cannot overwrite newer state.
        const acct = await stripe.accounts.retrieve(event.data.object.id);
        return {
          kind: 'account_updated',
          accountId: acct.id,
          detailsSubmitted: acct.details_submitted === true,
          payoutsEnabled: acct.payouts_enabled === true,
        };
      }
      default:
        return { kind: 'ignored' };
    }
  }

  return {
    kind: 'stripe',
    createCustomer: ({ orgId, email }) =>
      guarded(async () => {
        const c = await stripe.customers.create(
          { email: email ?? undefined, metadata: { org_id: orgId } },
          { idempotencyKey: `customer:${orgId}` },
        );
        return c.id;
      }),
    createCheckout: (i) =>
      guarded(async () => {
        const s = await stripe.checkout.sessions.create(
          {
            mode: 'payment',
            customer: i.customerId,
            client_reference_id: i.paymentId,
            line_items: [
              {
                quantity: 1,
                price_data: { currency: 'usd', unit_amount: i.amountCents, product_data: { name: i.description } },
              },
            ],
            metadata: { payment_id: i.paymentId, org_id: i.orgId, credit_cents: String(i.creditCents) },
            success_url: `${i.baseUrl}/billing/return?status=success&session_id={CHECKOUT_SESSION_ID}`,
            cancel_url: `${i.baseUrl}/billing/return?status=cancelled`,
          },
          { idempotencyKey: `checkout:${i.paymentId}` },
        );
        if (!s.url) throw new Error('checkout session has no url');
        return { ref: s.id, url: s.url };
      }),
    createCardSetup: (i) =>
      guarded(async () => {
        const s = await stripe.checkout.sessions.create(
          {
            mode: 'setup',
            currency: 'usd',
            customer: i.customerId,
            client_reference_id: i.paymentId,
            metadata: { payment_id: i.paymentId, org_id: i.orgId },
            setup_intent_data: { metadata: { payment_id: i.paymentId, org_id: i.orgId } },
            success_url: `${i.baseUrl}/billing/return?status=card_saved`,
            cancel_url: `${i.baseUrl}/billing/return?status=cancelled`,
          },
          { idempotencyKey: `setup:${i.paymentId}` },
        );
        if (!s.url) throw new Error('setup session has no url');
        return { ref: s.id, url: s.url };
      }),
    createPortal: (i) =>
      guarded(async () => {
        const p = await stripe.billingPortal.sessions.create({
          customer: i.customerId,
          return_url: `${i.baseUrl}/billing/return?status=portal`,
        });
        return { url: p.url };
      }),
    async chargeOffSession(i) {
      try {
        const pi = await stripe.paymentIntents.create(
          {
            amount: i.amountCents,
            currency: 'usd',
            customer: i.customerId,
            payment_method: i.paymentMethodId,
            off_session: true,
            confirm: true,
            metadata: { payment_id: i.paymentId, org_id: i.orgId, kind: 'auto_reload' },
          },
          { idempotencyKey: i.idempotencyKey },
        );
        if (pi.status === 'succeeded') return { ok: true, ref: pi.id };
        return { ok: false, ref: pi.id, reason: `payment_intent ${pi.status}` };
      } catch (e) {
        if (e instanceof Stripe.errors.StripeCardError) {
          const raw = e.raw as { payment_intent?: { id?: string } } | undefined;
          return { ok: false, ref: raw?.payment_intent?.id ?? null, reason: e.code ?? 'card_declined' };
        }
        throw backendError(e);
      }
    },
    createConnectedAccount: ({ orgId, email }) =>
      guarded(async () => {
        const a = await stripe.accounts.create(
          {
            controller: {
              stripe_dashboard: { type: 'express' },
              fees: { payer: 'application' },
              losses: { payments: 'application' },
              requirement_collection: 'stripe',
            },
            capabilities: { transfers: { requested: true } },
            email: email ?? undefined,
            metadata: { org_id: orgId },
          },
          { idempotencyKey: `connect-account:${orgId}` },
        );
        return { accountId: a.id };
      }),
    createOnboardingLink: ({ accountId, baseUrl }) =>
      guarded(async () => {
        const l = await stripe.accountLinks.create({
          account: accountId,
          type: 'account_onboarding',
          refresh_url: `${baseUrl}/billing/return?status=onboarding_refresh`,
          return_url: `${baseUrl}/billing/return?status=onboarding_done`,
        });
        return { url: l.url };
      }),
    transfer: (i) =>
      guarded(async () => {
        const t = await stripe.transfers.create(
          { amount: i.amountCents, currency: 'usd', destination: i.accountId, metadata: { payout_id: i.payoutId } },
          { idempotencyKey: i.idempotencyKey },
        );
        return { transferId: t.id };
      }),
    async verifyWebhook(rawBody: string, signature: string | undefined): Promise<VerifiedEvent> {
      if (!opts.webhookSecret) throw new SvcError('unavailable', 'SVC_STRIPE_WEBHOOK_SECRET is not set');
      if (!signature) throw new SvcError('webhook_signature_invalid', 'Missing Stripe-Signature header');
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(rawBody, signature, opts.webhookSecret);
      } catch (e) {
        throw new SvcError(
          'webhook_signature_invalid',
          e instanceof Error ? e.message : 'Signature verification failed',
        );
      }
      return { id: event.id, type: event.type, event: await guarded(() => normalise(event)) };
    },
  };
}
