/**
 * The local test-payments back-end (no SVC_STRIPE_SECRET_KEY): checkout, card setup, portal and Connect
 * onboarding open pages on the control plane itself (control/web/pages/test-payments.tsx), labeled "TEST MODE - no real money".
 * Nothing leaves the machine; page links are capability URLs (random ids or HMAC-signed tokens).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { randomString } from '../../core/ids.js';
import { SvcError } from '../../core/errors.js';
import type { PaymentsBackend, VerifiedEvent } from './payments.js';
import type { Row } from '../../core/db/database.js';

/** Test cards, as Stripe's: 4242… succeeds, 4000…0002 is declined, 4000…0341 attaches but off-session charges fail. */
export const TEST_CARDS = {
  ok: '4242424242424242',
  declined: '4000000000000002',
  attachThenDecline: '4000000000000341',
} as const;

export type TestCardOutcome = 'ok' | 'declined' | 'attach_then_decline' | 'unknown';

export function testCardOutcome(input: string): TestCardOutcome {
  const digits = input.replace(/[\s-]/g, '');
  if (digits === TEST_CARDS.ok) return 'ok';
  if (digits === TEST_CARDS.declined) return 'declined';
  if (digits === TEST_CARDS.attachThenDecline) return 'attach_then_decline';
  return 'unknown';
}

/** Payment-method ids of the test back-end carry their outcome, so off-session charges stay deterministic. */
export function testPaymentMethodId(outcome: 'ok' | 'attach_then_decline'): string {
  return `pm_test_${outcome === 'ok' ? 'ok' : 'decline'}_${randomString(16)}`;
}

/*
 * The events the test pages apply: the normalised event Stripe's webhook yields for the same step, so a test
 * page completes a checkout, a card setup or onboarding through applyVerifiedEvent exactly as the webhook does
 * (same effects, same processor_events row). One event id per payment or account: a page submitted twice
 * applies once, like a redelivered webhook.
 */

export function testCheckoutPaidEvent(payment: Row<'payments'>): VerifiedEvent {
  return {
    id: `evt_svctest_${payment.id}`,
    type: 'checkout.session.completed',
    event: { kind: 'checkout_paid', sessionRef: payment.processor_ref ?? '', paymentId: payment.id },
  };
}

export function testSetupSucceededEvent(
  payment: Row<'payments'>,
  customerId: string,
  card: { outcome: 'ok' | 'attach_then_decline'; last4: string },
): VerifiedEvent {
  return {
    id: `evt_svctest_${payment.id}`,
    type: 'setup_intent.succeeded',
    event: {
      kind: 'setup_succeeded',
      customerId,
      paymentMethodId: testPaymentMethodId(card.outcome),
      card: { brand: 'visa', last4: card.last4 },
      setupRef: payment.processor_ref ?? '',
      setupCreatedAt: payment.created_at,
    },
  };
}

export function testOnboardingDoneEvent(accountId: string): VerifiedEvent {
  return {
    id: `evt_svctest_onboarding_${accountId}`,
    type: 'account.updated',
    event: { kind: 'account_updated', accountId, detailsSubmitted: true, payoutsEnabled: true },
  };
}

function sign(secretKey: Buffer, payload: string): string {
  return createHmac('sha256', secretKey).update(payload).digest('base64url');
}

/** `orgId.expiresMs.sig`: a short-lived link to the test billing portal page. */
export function makePortalToken(secretKey: Buffer, orgId: string, expiresAt: number): string {
  const body = `${orgId}.${expiresAt}`;
  return `${body}.${sign(secretKey, 'portal:' + body)}`;
}

export function verifyPortalToken(secretKey: Buffer, token: string, now: number): string | null {
  const [orgId, exp, sig] = token.split('.');
  if (!orgId || !exp || !sig) return null;
  const want = Buffer.from(sign(secretKey, `portal:${orgId}.${exp}`));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
  return Number(exp) > now ? orgId : null;
}

export function connectLinkSig(secretKey: Buffer, accountId: string): string {
  return sign(secretKey, 'connect:' + accountId);
}

/**
 * `allowed: false` (production without SVC_TEST_PAYMENTS) refuses every money-creating step: otherwise anyone
 * could mint credits with the public test card on a live marketplace that forgot its Stripe key.
 */
export function createTestBackend(opts: { secretKey: Buffer; allowed: boolean }): PaymentsBackend {
  const guard = (): void => {
    if (!opts.allowed)
      throw new SvcError(
        'unavailable',
        'Payments are not configured: set SVC_STRIPE_SECRET_KEY (test payments are off in production)',
      );
  };
  return {
    kind: 'test',
    async createCustomer() {
      guard();
      return `cus_test_${randomString(16)}`;
    },
    async createCheckout({ baseUrl }) {
      guard();
      const ref = `cs_test_${randomString(24)}`;
      return { ref, url: `${baseUrl}/billing/test/checkout/${ref}` };
    },
    async createCardSetup({ baseUrl }) {
      guard();
      const ref = `seti_test_${randomString(24)}`;
      return { ref, url: `${baseUrl}/billing/test/setup/${ref}` };
    },
    async createPortal({ orgId, baseUrl }) {
      const token = makePortalToken(opts.secretKey, orgId, Date.now() + 3_600_000);
      return { url: `${baseUrl}/billing/test/portal/${token}` };
    },
    async chargeOffSession({ paymentMethodId }) {
      guard();
      const ref = `pi_test_${randomString(24)}`;
      if (paymentMethodId.startsWith('pm_test_ok_')) return { ok: true, ref };
      return { ok: false, ref, reason: 'card_declined (test card 4000 0000 0000 0341)' };
    },
    async createConnectedAccount() {
      guard();
      return { accountId: `acct_test_${randomString(16)}` };
    },
    async createOnboardingLink({ accountId, baseUrl }) {
      return { url: `${baseUrl}/billing/test/connect/${accountId}?sig=${connectLinkSig(opts.secretKey, accountId)}` };
    },
    async transfer() {
      guard();
      return { transferId: `tr_test_${randomString(24)}` };
    },
    async verifyWebhook() {
      throw new SvcError(
        'unavailable',
        'Stripe webhooks are not used in test-payments mode (SVC_STRIPE_SECRET_KEY is not set)',
      );
    },
  };
}
