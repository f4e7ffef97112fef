/**
 * The payment back-end interface: Stripe (SVC_STRIPE_SECRET_KEY set) or the local test-payments mode.
 * Back-ends only talk to the processor; every ledger and table write lives in the billing services.
 * `baseUrl` is the control plane's public origin (return pages, test-mode pages), resolved per request.
 */
import type { Config } from '../../core/config.js';
import type { AppContext } from '../context.js';
import { createStripeBackend } from './stripe-backend.js';
import { createTestBackend } from './test-backend.js';

export type ProcessorKind = 'stripe' | 'test';

export interface CardInfo {
  brand: string | null;
  last4: string | null;
}

/** Processor events, normalised: the webhook service never sees a Stripe object. */
export type BillingEvent =
  | { kind: 'checkout_paid'; sessionRef: string; paymentId: string | null }
  | { kind: 'checkout_unpaid'; sessionRef: string; paymentId: string | null }
  | { kind: 'checkout_failed'; sessionRef: string; paymentId: string | null; reason: string }
  | {
      kind: 'setup_succeeded';
      customerId: string;
      paymentMethodId: string;
      card: CardInfo;
      setupRef: string;
      setupCreatedAt: number;
    }
  | { kind: 'card_removed'; paymentMethodId: string }
  | { kind: 'charge_succeeded'; chargeRef: string; paymentId: string | null }
  | { kind: 'charge_failed'; chargeRef: string; paymentId: string | null; reason: string }
  | { kind: 'account_updated'; accountId: string; detailsSubmitted: boolean; payoutsEnabled: boolean }
  | { kind: 'ignored' };

export interface VerifiedEvent {
  id: string;
  type: string;
  event: BillingEvent;
}

export type ChargeResult = { ok: true; ref: string } | { ok: false; ref: string | null; reason: string };

export interface PaymentsBackend {
  readonly kind: ProcessorKind;
  /** Create the processor's customer for an org (idempotent per org on the processor side). */
  createCustomer(input: { orgId: string; email: string | null }): Promise<string>;
  /** A hosted checkout for a one-off purchase; `ref` is the session id stored in payments.processor_ref. */
  createCheckout(input: {
    paymentId: string;
    orgId: string;
    customerId: string;
    amountCents: number;
    creditCents: number;
    description: string;
    baseUrl: string;
  }): Promise<{ ref: string; url: string }>;
  /** Card setup: a page where a human confirms a card for later off-session charges. */
  createCardSetup(input: {
    paymentId: string;
    orgId: string;
    customerId: string;
    baseUrl: string;
  }): Promise<{ ref: string; url: string }>;
  createPortal(input: { orgId: string; customerId: string; baseUrl: string }): Promise<{ url: string }>;
  /** Off-session charge of the saved card; `idempotencyKey` makes a retried call charge once. */
  chargeOffSession(input: {
    paymentId: string;
    orgId: string;
    customerId: string;
    paymentMethodId: string;
    amountCents: number;
    idempotencyKey: string;
  }): Promise<ChargeResult>;
  createConnectedAccount(input: { orgId: string; email: string | null }): Promise<{ accountId: string }>;
  createOnboardingLink(input: { accountId: string; orgId: string; baseUrl: string }): Promise<{ url: string }>;
  transfer(input: {
    accountId: string;
    amountCents: number;
    idempotencyKey: string;
    payoutId: string;
  }): Promise<{ transferId: string }>;
  /** Verifies a webhook signature and normalises the event; throws `webhook_signature_invalid`. */
  verifyWebhook(rawBody: string, signature: string | undefined): Promise<VerifiedEvent>;
}

/** What billing services need: the control process passes its AppContext, the operator CLI builds just this. */
export type BillingCtx = Pick<AppContext, 'config' | 'db' | 'clock' | 'payments'>;

/** What `payments_mode` reports: `disabled` when only the test back-end exists and it refuses (production). */
export function paymentsMode(ctx: Pick<AppContext, 'config' | 'payments'>): ProcessorKind | 'disabled' {
  return ctx.payments.kind === 'test' && !ctx.config.billing.testPaymentsAllowed ? 'disabled' : ctx.payments.kind;
}

export function createPaymentsBackend(config: Readonly<Config>, secretKey: Buffer): PaymentsBackend {
  const key = config.stripe.secretKey;
  if (key) {
    return createStripeBackend({
      secretKey: key,
      webhookSecret: config.stripe.webhookSecret,
      apiBase: config.stripe.apiBase,
      maxNetworkRetries: config.billing.stripeMaxNetworkRetries,
    });
  }
  return createTestBackend({ secretKey, allowed: config.billing.testPaymentsAllowed });
}
