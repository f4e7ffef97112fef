import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { loadConfig, ConfigError } from '../../../core/config.js';
import { priceCheckout } from '../../../control/billing/checkout.service.js';
import { periodEnd, periodOf, previousPeriod } from '../../../control/billing/payouts.service.js';
import { createPaymentsBackend } from '../../../control/billing/payments.js';
import { makePortalToken, testCardOutcome, verifyPortalToken } from '../../../control/billing/test-backend.js';
import { decodeForm } from '../../helpers/fake-stripe.js';
import type { BillingCtx } from '../../../control/billing/payments.js';
import { isSvcError } from '../../../core/errors.js';

const ctx = { config: loadConfig({}) } as unknown as BillingCtx;

describe('priceCheckout', () => {
  it.each([
    [{ pack: 'starter' }, 500, 500],
    [{ pack: 'pro' }, 5000, 5500],
    [{ amount_cents: 500 }, 500, 500],
    [{ amount_cents: 100_000 }, 100_000, 100_000],
  ])('%j pays %i and credits %i', (req, paid, credited) => {
    const r = priceCheckout(ctx, req);
    expect([r.amountCents, r.creditCents]).toEqual([paid, credited]);
  });

  it.each([
    [{}],
    [{ pack: 'starter', amount_cents: 600 }],
    [{ amount_cents: 499 }],
    [{ amount_cents: 100_001 }],
    [{ pack: 'gold' }],
  ])('refuses %j', (req) => {
    try {
      priceCheckout(ctx, req);
      expect.unreachable();
    } catch (e) {
      expect(isSvcError(e) && e.code).toBe('validation_failed');
    }
  });
});

describe('SVC_CREDIT_PACKS', () => {
  it('parses configured packs', () => {
    const c = loadConfig({ SVC_CREDIT_PACKS: '[{"id":"big","name":"Big","price_cents":10000,"credit_cents":12000}]' });
    expect(c.billing.packs).toEqual([{ id: 'big', name: 'Big', price_cents: 10000, credit_cents: 12000 }]);
  });

  it.each(['not json', '[]', '[{"id":"x","name":"X","price_cents":1.5,"credit_cents":2}]'])(
    'refuses %s at start',
    (raw) => {
      expect(() => loadConfig({ SVC_CREDIT_PACKS: raw })).toThrow(ConfigError);
    },
  );
});

describe('payout periods', () => {
  it.each([
    [Date.UTC(2026, 0, 1), '2026-01', '2025-12'],
    [Date.UTC(2026, 10, 22, 13), '2026-11', '2026-10'],
    [Date.UTC(2026, 11, 31, 23, 59), '2026-12', '2026-11'],
  ])('%i is in %s, previous %s', (ms, period, prev) => {
    expect(periodOf(ms)).toBe(period);
    expect(previousPeriod(ms)).toBe(prev);
  });

  it('ends a period at the first ms of the next month', () => {
    expect(periodEnd('2026-12')).toBe(Date.UTC(2027, 0, 1));
    expect(() => periodEnd('2026-13')).toThrow();
    expect(() => periodEnd('26-1')).toThrow();
  });
});

describe('test-payments mode', () => {
  it.each([
    ['4242 4242 4242 4242', 'ok'],
    ['4242-4242-4242-4242', 'ok'],
    ['4000000000000002', 'declined'],
    ['4000 0000 0000 0341', 'attach_then_decline'],
    ['5555 5555 5555 4444', 'unknown'],
    ['', 'unknown'],
  ])('card %s -> %s', (card, outcome) => {
    expect(testCardOutcome(card)).toBe(outcome);
  });

  it('accepts its own portal token until it expires and refuses a forged one', () => {
    const key = randomBytes(32);
    const t = makePortalToken(key, 'org_1', 2_000);
    expect(verifyPortalToken(key, t, 1_000)).toBe('org_1');
    expect(verifyPortalToken(key, t, 2_000)).toBeNull();
    expect(verifyPortalToken(randomBytes(32), t, 1_000)).toBeNull();
    expect(verifyPortalToken(key, t.replace('org_1', 'org_2'), 1_000)).toBeNull();
  });
});

describe('fake Stripe form decoding', () => {
  it('nests bracketed keys as the SDK encodes them', () => {
    expect(decodeForm('metadata%5Bpayment_id%5D=pay_1&line_items%5B0%5D%5Bquantity%5D=1&mode=payment')).toEqual({
      metadata: { payment_id: 'pay_1' },
      line_items: { 0: { quantity: '1' } },
      mode: 'payment',
    });
  });
});

describe('test payments in production', () => {
  const input = {
    paymentId: 'pay_1',
    orgId: 'org_1',
    customerId: 'cus_1',
    amountCents: 500,
    creditCents: 500,
    description: 'x',
    baseUrl: 'http://x',
  };

  it('are refused without SVC_STRIPE_SECRET_KEY unless explicitly allowed', async () => {
    const off = createPaymentsBackend(loadConfig({ SVC_ENV: 'production' }), randomBytes(32));
    expect(off.kind).toBe('test');
    await expect(off.createCheckout(input)).rejects.toMatchObject({ code: 'unavailable' });
    await expect(off.createCustomer({ orgId: 'org_1', email: null })).rejects.toMatchObject({ code: 'unavailable' });
    const on = createPaymentsBackend(loadConfig({ SVC_ENV: 'production', SVC_TEST_PAYMENTS: 'true' }), randomBytes(32));
    expect((await on.createCheckout(input)).url).toMatch(/^http:\/\/x\/billing\/test\/checkout\/cs_test_/);
    const dev = createPaymentsBackend(loadConfig({}), randomBytes(32));
    expect((await dev.createCheckout(input)).url).toContain('/billing/test/checkout/');
  });
});
