import { describe, expect, it } from 'vitest';
import type { ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { expectLedgerConsistent, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { useStripeControl, type FakeStripe } from '../../helpers/fake-stripe.js';
import type { DbHandles } from '../../../core/db/database.js';
import { runAuthSuite } from '../../helpers/auth-suite.js';

let fake: FakeStripe;
let h: ControlHarness;
let db: DbHandles;

useStripeControl((s) => ({ fake, h, db } = s));

async function checkout(org: SeededOrg, body: unknown) {
  return call(h.control.url, 'POST', '/v1/billing/checkout', { token: org.key, body });
}

function sessionObject(paymentId: string, sessionId: string, extra: Record<string, unknown> = {}) {
  return {
    id: sessionId,
    object: 'checkout.session',
    mode: 'payment',
    payment_status: 'paid',
    status: 'complete',
    amount_total: 2000,
    metadata: { payment_id: paymentId },
    ...extra,
  };
}

async function purchaseEntries(orgId: string) {
  return db.db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('kind', '=', 'purchase')
    .execute();
}

describe('balance and packs', () => {
  it('shows a zero balance, no card and auto-reload off for a new org, with a key or a session', async () => {
    const org = await seedOrg(db);
    for (const token of [org.key, org.session]) {
      const r = await call(h.control.url, 'GET', '/v1/billing/balance', { token });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        org_id: org.orgId,
        credit_cents: 0,
        pending_cents: 0,
        reserved_cents: 0,
        card_on_file: false,
        card: null,
        payments_mode: 'stripe',
        auto_reload: { enabled: false, paused: false },
      });
    }
  });

  it('lists the configured packs with their bonus', async () => {
    const org = await seedOrg(db);
    const r = await call(h.control.url, 'GET', '/v1/billing/packs', { token: org.key });
    expect(r.status).toBe(200);
    expect(r.body.data).toContainEqual({
      id: 'standard',
      name: 'Standard',
      price_cents: 2000,
      credit_cents: 2100,
      bonus_cents: 100,
    });
    expect(r.body.custom_amount).toEqual({ min_cents: 500, max_cents: 100000 });
  });

  it('documents the billing routes in the OpenAPI document', async () => {
    const r = await call(h.control.url, 'GET', '/v1/openapi.json');
    expect(r.status).toBe(200);
    for (const path of [
      '/v1/billing/balance',
      '/v1/billing/packs',
      '/v1/billing/checkout',
      '/v1/billing/setup',
      '/v1/billing/portal',
      '/v1/billing/auto-reload',
      '/v1/billing/webhooks/stripe',
      '/v1/provider/connect',
      '/v1/provider/payouts',
    ]) {
      expect(Object.keys(r.body.paths)).toContain(path);
    }
  });

  it('refuses the balance without a credential', async () => {
    const r = await call(h.control.url, 'GET', '/v1/billing/balance');
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthorized');
  });
});

describe('checkout', () => {
  it('creates a Stripe Checkout Session for a pack and returns its URL', async () => {
    const org = await seedOrg(db);
    const r = await checkout(org, { pack: 'standard' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ mode: 'stripe', pack: 'standard', amount_cents: 2000, credit_cents: 2100 });
    expect(r.body.checkout_url).toMatch(/^https:\/\/checkout\.stripe\.test\//);
    const sent = fake
      .callsTo('POST', '/v1/checkout/sessions')
      .find((q) => (q.body.metadata as Record<string, string>).payment_id === r.body.payment_id)!;
    expect(sent.body).toMatchObject({
      mode: 'payment',
      line_items: { 0: { quantity: '1', price_data: { currency: 'usd', unit_amount: '2000' } } },
    });
    expect(sent.idempotencyKey).toBe(`checkout:${r.body.payment_id}`);
    const payment = await db.db
      .selectFrom('payments')
      .selectAll()
      .where('id', '=', r.body.payment_id)
      .executeTakeFirstOrThrow();
    expect(payment).toMatchObject({
      status: 'open',
      kind: 'checkout',
      processor: 'stripe',
      amount_paid_cents: 2000,
      credit_cents: 2100,
    });
    expect(payment.processor_ref).toMatch(/^cs_test_/);
    expect((await call(h.control.url, 'GET', '/v1/billing/balance', { token: org.key })).body.credit_cents).toBe(0);
  });

  it.each([
    [{ pack: 'standard', amount_cents: 1000 }, 'pack'],
    [{}, 'pack'],
    [{ amount_cents: 499 }, 'amount_cents'],
    [{ amount_cents: 100001 }, 'amount_cents'],
    [{ pack: 'nope' }, 'pack'],
  ])('rejects %j with validation_failed on %s', async (body, path) => {
    const org = await seedOrg(db);
    const r = await checkout(org, body);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.errors[0].path).toBe(path);
  });

  it('needs billing:write', async () => {
    const org = await seedOrg(db, { scopes: ['catalog:read', 'proxy:call', 'keys:write', 'usage:read'] });
    const r = await checkout(org, { pack: 'starter' });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('insufficient_scope');
  });
});

describe('stripe webhooks', () => {
  it('credits a completed checkout exactly once under redelivery and a second event for the same session', async () => {
    const org = await seedOrg(db);
    const co = await checkout(org, { pack: 'standard' });
    const sessionId = (
      await db.db
        .selectFrom('payments')
        .select('processor_ref')
        .where('id', '=', co.body.payment_id)
        .executeTakeFirstOrThrow()
    ).processor_ref!;
    const ev = fake.signedEvent('checkout.session.completed', sessionObject(co.body.payment_id, sessionId));
    const first = await fake.deliver(h.control.url, ev);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ received: true, duplicate: false, outcome: 'credited' });
    const again = await Promise.all([fake.deliver(h.control.url, ev), fake.deliver(h.control.url, ev)]);
    for (const r of again) expect(r.body).toMatchObject({ duplicate: true, outcome: 'credited' });
    const other = await fake.deliver(
      h.control.url,
      fake.signedEvent('checkout.session.async_payment_succeeded', sessionObject(co.body.payment_id, sessionId)),
    );
    expect(other.body).toMatchObject({ duplicate: false, outcome: 'already_credited' });

    const bal = await call(h.control.url, 'GET', '/v1/billing/balance', { token: org.key });
    expect(bal.body.credit_cents).toBe(2100);
    const entries = await purchaseEntries(org.orgId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      amount_cents: 2100,
      idempotency_key: `purchase:${co.body.payment_id}`,
      ref_type: 'payment',
      ref_id: co.body.payment_id,
    });
    const payment = await db.db
      .selectFrom('payments')
      .selectAll()
      .where('id', '=', co.body.payment_id)
      .executeTakeFirstOrThrow();
    expect(payment.status).toBe('succeeded');
    expect(await db.db.selectFrom('processor_events').selectAll().where('id', '=', ev.id).execute()).toHaveLength(1);
    await expectLedgerConsistent(db);
  });

  it('keeps a paid checkout paid when an expiry arrives out of order, and credits a paid event after an expiry', async () => {
    const org = await seedOrg(db);
    const a = await checkout(org, { amount_cents: 700 });
    const aRef = (
      await db.db
        .selectFrom('payments')
        .select('processor_ref')
        .where('id', '=', a.body.payment_id)
        .executeTakeFirstOrThrow()
    ).processor_ref!;
    await fake.deliver(
      h.control.url,
      fake.signedEvent('checkout.session.completed', sessionObject(a.body.payment_id, aRef)),
    );
    const late = await fake.deliver(
      h.control.url,
      fake.signedEvent(
        'checkout.session.expired',
        sessionObject(a.body.payment_id, aRef, { status: 'expired', payment_status: 'unpaid' }),
      ),
    );
    expect(late.body.outcome).toBe('no_change');

    const b = await checkout(org, { amount_cents: 900 });
    const bRef = (
      await db.db
        .selectFrom('payments')
        .select('processor_ref')
        .where('id', '=', b.body.payment_id)
        .executeTakeFirstOrThrow()
    ).processor_ref!;
    await fake.deliver(
      h.control.url,
      fake.signedEvent(
        'checkout.session.async_payment_failed',
        sessionObject(b.body.payment_id, bRef, { payment_status: 'unpaid' }),
      ),
    );
    expect(
      (
        await db.db
          .selectFrom('payments')
          .select('status')
          .where('id', '=', b.body.payment_id)
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe('failed');
    const paidLater = await fake.deliver(
      h.control.url,
      fake.signedEvent('checkout.session.async_payment_succeeded', sessionObject(b.body.payment_id, bRef)),
    );
    expect(paidLater.body.outcome).toBe('credited');

    const bal = await call(h.control.url, 'GET', '/v1/billing/balance', { token: org.key });
    expect(bal.body.credit_cents).toBe(1600);
    const statuses = await db.db
      .selectFrom('payments')
      .select(['id', 'status'])
      .where('org_id', '=', org.orgId)
      .execute();
    expect(statuses.map((s) => s.status).sort()).toEqual(['succeeded', 'succeeded']);
    await expectLedgerConsistent(db);
  });

  it('does not credit an unpaid completed session (delayed payment method)', async () => {
    const org = await seedOrg(db);
    const co = await checkout(org, { pack: 'starter' });
    const ref = (
      await db.db
        .selectFrom('payments')
        .select('processor_ref')
        .where('id', '=', co.body.payment_id)
        .executeTakeFirstOrThrow()
    ).processor_ref!;
    const r = await fake.deliver(
      h.control.url,
      fake.signedEvent(
        'checkout.session.completed',
        sessionObject(co.body.payment_id, ref, { payment_status: 'unpaid' }),
      ),
    );
    expect(r.body.outcome).toBe('awaiting_payment');
    expect(await purchaseEntries(org.orgId)).toHaveLength(0);
  });

  it.each([
    ['a tampered body', { tamper: true }],
    ['a signature made with another secret', { secret: 'whsec_not_ours_0123456789' }],
  ])('refuses %s and changes nothing', async (_label, opts) => {
    const org = await seedOrg(db);
    const co = await checkout(org, { pack: 'starter' });
    const ref = (
      await db.db
        .selectFrom('payments')
        .select('processor_ref')
        .where('id', '=', co.body.payment_id)
        .executeTakeFirstOrThrow()
    ).processor_ref!;
    const ev = fake.signedEvent('checkout.session.completed', sessionObject(co.body.payment_id, ref), opts);
    const r = await fake.deliver(h.control.url, ev);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('webhook_signature_invalid');
    expect(await db.db.selectFrom('processor_events').selectAll().where('id', '=', ev.id).execute()).toHaveLength(0);
    expect(await purchaseEntries(org.orgId)).toHaveLength(0);
    expect(
      (
        await db.db
          .selectFrom('payments')
          .select('status')
          .where('id', '=', co.body.payment_id)
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe('open');
  });

  it('refuses an unsigned event', async () => {
    const ev = fake.signedEvent('checkout.session.completed', sessionObject('pay_x', 'cs_x'));
    const res = await fetch(`${h.control.url}/v1/billing/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: ev.payload,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('webhook_signature_invalid');
  });

  it('records and ignores event types it does not handle', async () => {
    const r = await fake.deliver(
      h.control.url,
      fake.signedEvent('customer.created', { id: 'cus_x', object: 'customer' }),
    );
    expect(r.status).toBe(200);
    expect(r.body.outcome).toBe('ignored');
  });
});

runAuthSuite('billing routes', () => h, [
  { method: 'POST', path: '/v1/billing/checkout', scope: 'billing:write', body: { pack: 'starter' } },
  { method: 'POST', path: '/v1/billing/setup', scope: 'billing:write' },
  { method: 'POST', path: '/v1/billing/portal', scope: 'billing:write' },
  { method: 'POST', path: '/v1/billing/auto-reload', scope: 'billing:write', body: { enabled: false } },
  { method: 'POST', path: '/v1/provider/connect', scope: 'provider:write' },
  { method: 'GET', path: '/v1/provider/payouts', scope: 'provider:write' },
]);
