/**
 * The test-payments pages and Stripe's webhook are one path: a page applies the normalised event the webhook
 * would (control/billing/test-backend.ts), so the same steps end in the same ledger, balance, payments and card
 * state in both modes. Two real control planes side by side: one in test-payments mode driven through its pages
 * like a browser, one on a fake Stripe driven through signed webhooks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { csrfOf, WebClient } from '../../helpers/web-client.js';
import { expectLedgerConsistent, openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { startFakeStripe, stripeEnv, type FakeStripe } from '../../helpers/fake-stripe.js';
import type { DbHandles } from '../../../core/db/database.js';

interface Side {
  h: ControlHarness;
  db: DbHandles;
}
let testMode: Side;
let stripe: Side;
let fake: FakeStripe;

beforeAll(async () => {
  fake = await startFakeStripe();
  const [t, s] = await Promise.all([startControl(), startControl(stripeEnv(fake))]);
  testMode = { h: t, db: openTestDb(t.dataDir) };
  stripe = { h: s, db: openTestDb(s.dataDir) };
});

afterAll(async () => {
  for (const side of [testMode, stripe]) {
    await side?.db.close();
    await side?.h.stop();
  }
  await fake?.stop();
});

/** Submits a test page's card form like a browser (cookie + CSRF token from the site). */
async function submitCard(url: string, card: string): Promise<{ status: number; html: string }> {
  const web = new WebClient(new URL(url).origin);
  const csrf_token = csrfOf((await web.get('/login')).html);
  return web.post(url.slice(new URL(url).origin.length), { card, exp: '12/34', cvc: '123', csrf_token });
}

async function post(side: Side, org: SeededOrg, path: string, body?: unknown) {
  const r = await call(side.h.control.url, 'POST', path, { token: org.key, ...(body ? { body } : {}) });
  expect(r.status, path).toBe(201);
  return r.body;
}

async function paymentRow(side: Side, id: string) {
  return side.db.db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** What a person can observe of an org's money and card, without ids and timestamps that differ per mode. */
async function billingState(side: Side, orgId: string) {
  const db = side.db.db;
  const payments = await db
    .selectFrom('payments')
    .select(['kind', 'status', 'amount_paid_cents', 'credit_cents', 'failure_reason'])
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const ledger = await db
    .selectFrom('ledger_entries')
    .select(['kind', 'status', 'amount_cents', 'reason', 'ref_type'])
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .execute();
  const account = await db
    .selectFrom('billing_accounts')
    .select(['card_brand', 'card_last4', 'payment_method_id', 'auto_reload_failures', 'auto_reload_paused_at'])
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  const bal = await db
    .selectFrom('balances')
    .select(['credit_cents', 'pending_cents'])
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  return {
    payments,
    ledger,
    balance: bal ?? null,
    card: account
      ? {
          brand: account.card_brand,
          last4: account.card_last4,
          on_file: account.payment_method_id !== null,
          failures: account.auto_reload_failures,
          paused: account.auto_reload_paused_at !== null,
        }
      : null,
  };
}

/** Outcome recorded for the test page's event of one payment (the webhook's comes back in its answer). */
async function pageOutcome(paymentId: string): Promise<string | undefined> {
  const row = await testMode.db.db
    .selectFrom('processor_events')
    .select('outcome')
    .where('id', '=', `evt_svctest_${paymentId}`)
    .executeTakeFirst();
  return row?.outcome;
}

/** Stripe's setup_intent.succeeded for one setup payment, as the fake signs and delivers it. */
async function setupWebhook(paymentId: string): Promise<string> {
  const p = await paymentRow(stripe, paymentId);
  const session = fake
    .callsTo('POST', '/v1/checkout/sessions')
    .find((r) => (r.body.metadata as Record<string, string>).payment_id === paymentId)!;
  const r = await fake.deliver(
    stripe.h.control.url,
    fake.signedEvent('setup_intent.succeeded', {
      id: `seti_${paymentId}`,
      object: 'setup_intent',
      status: 'succeeded',
      created: Math.floor(p.created_at / 1000),
      customer: session.body.customer,
      payment_method: `pm_card_${paymentId}`,
      metadata: { payment_id: paymentId },
    }),
  );
  expect(r.status).toBe(200);
  return r.body.outcome as string;
}

async function checkoutWebhook(paymentId: string): Promise<string> {
  const p = await paymentRow(stripe, paymentId);
  const r = await fake.deliver(
    stripe.h.control.url,
    fake.signedEvent('checkout.session.completed', {
      id: p.processor_ref,
      object: 'checkout.session',
      mode: 'payment',
      payment_status: 'paid',
      status: 'complete',
      amount_total: p.amount_paid_cents,
      metadata: { payment_id: paymentId },
    }),
  );
  expect(r.status).toBe(200);
  return r.body.outcome as string;
}

describe('test-payments pages complete a step exactly as the Stripe webhook does', () => {
  it('a card saved on one of two open setups closes both, as setup_intent.succeeded does', async () => {
    const viaPage = await seedOrg(testMode.db);
    const viaHook = await seedOrg(stripe.db);
    const pageSetups = [
      await post(testMode, viaPage, '/v1/billing/setup'),
      await post(testMode, viaPage, '/v1/billing/setup'),
    ];
    const hookSetups = [
      await post(stripe, viaHook, '/v1/billing/setup'),
      await post(stripe, viaHook, '/v1/billing/setup'),
    ];

    expect((await submitCard(pageSetups[0].setup_url, '4242 4242 4242 4242')).status).toBe(200);
    const hookOutcome = await setupWebhook(hookSetups[0].setup_id);

    const page = await billingState(testMode, viaPage.orgId);
    const hook = await billingState(stripe, viaHook.orgId);
    expect(page.payments.map((p) => p.status)).toEqual(['succeeded', 'succeeded']);
    expect(page).toEqual(hook);
    expect(await pageOutcome(pageSetups[0].setup_id)).toBe(hookOutcome);
  });

  it('a paid checkout credits the same ledger entry and balance, once, however often it is reported', async () => {
    const viaPage = await seedOrg(testMode.db);
    const viaHook = await seedOrg(stripe.db);
    const pageCo = await post(testMode, viaPage, '/v1/billing/checkout', { pack: 'standard' });
    const hookCo = await post(stripe, viaHook, '/v1/billing/checkout', { pack: 'standard' });

    expect((await submitCard(pageCo.checkout_url, '4000 0000 0000 0002')).status).toBe(402);
    for (let i = 0; i < 2; i++) {
      expect((await submitCard(pageCo.checkout_url, '4242 4242 4242 4242')).status).toBe(200);
    }
    const outcomes = [await checkoutWebhook(hookCo.payment_id), await checkoutWebhook(hookCo.payment_id)];

    expect(outcomes).toEqual(['credited', 'already_credited']);
    expect(await pageOutcome(pageCo.payment_id)).toBe('credited');
    const page = await billingState(testMode, viaPage.orgId);
    const hook = await billingState(stripe, viaHook.orgId);
    expect(page.ledger).toEqual([
      expect.objectContaining({ kind: 'purchase', amount_cents: 2100, status: 'settled', ref_type: 'payment' }),
    ]);
    expect(page.balance?.credit_cents).toBe(2100);
    expect(page).toEqual(hook);
    await expectLedgerConsistent(testMode.db);
    await expectLedgerConsistent(stripe.db);
  });
});
