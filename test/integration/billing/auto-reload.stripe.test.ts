import { describe, expect, it } from 'vitest';
import type { ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { chargeLikeGateway, expectLedgerConsistent, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { useStripeControl, type FakeStripe } from '../../helpers/fake-stripe.js';
import type { DbHandles } from '../../../core/db/database.js';
import { newId } from '../../../core/ids.js';

let fake: FakeStripe;
let h: ControlHarness;
let db: DbHandles;

useStripeControl((s) => ({ fake, h, db } = s), { SVC_AUTO_RELOAD_INTERVAL_MS: '100' });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await sleep(100);
  }
}

const balance = async (org: SeededOrg) =>
  (await call(h.control.url, 'GET', '/v1/billing/balance', { token: org.key })).body;
const chargesFor = (customer: string) =>
  fake.callsTo('POST', '/v1/payment_intents').filter((r) => r.body.customer === customer);

/** Card setup over HTTP, then Stripe's setup_intent.succeeded webhook: returns the org's customer id. */
async function cardOnFile(
  org: SeededOrg,
  pm = `pm_${org.orgId}`,
  createdSec = Math.floor(Date.now() / 1000),
): Promise<string> {
  const setup = await call(h.control.url, 'POST', '/v1/billing/setup', { token: org.key });
  expect(setup.status).toBe(201);
  expect(setup.body.setup_url).toMatch(/^https:\/\/checkout\.stripe\.test\//);
  const sent = fake
    .callsTo('POST', '/v1/checkout/sessions')
    .find((r) => (r.body.metadata as Record<string, string>).payment_id === setup.body.setup_id)!;
  expect(sent.body).toMatchObject({ mode: 'setup', currency: 'usd' });
  const customer = sent.body.customer as string;
  const ev = await fake.deliver(
    h.control.url,
    fake.signedEvent('setup_intent.succeeded', {
      id: newId('req').replace('req', 'seti'),
      object: 'setup_intent',
      status: 'succeeded',
      created: createdSec,
      customer,
      payment_method: pm,
      metadata: { payment_id: setup.body.setup_id },
    }),
  );
  expect(ev.body.outcome).toBe('card_saved');
  return customer;
}

describe('auto-reload with Stripe', () => {
  it('saves the card from the setup webhook, then charges it off-session once per dip', async () => {
    const org = await seedOrg(db);
    const customer = await cardOnFile(org);
    expect(await balance(org)).toMatchObject({ card_on_file: true, card: { brand: 'visa', last4: '4242' } });

    const en = await call(h.control.url, 'POST', '/v1/billing/auto-reload', {
      token: org.key,
      body: { enabled: true, threshold: 1000, amount: 2000 },
    });
    expect(en.status).toBe(200);
    const after = await waitFor(
      () => balance(org),
      (b) => b.credit_cents === 2000,
    );
    expect(after.credit_cents).toBe(2000);
    await sleep(500);
    const charges = chargesFor(customer);
    expect(charges).toHaveLength(1);
    expect(charges[0]!.body).toMatchObject({
      amount: '2000',
      currency: 'usd',
      off_session: 'true',
      confirm: 'true',
      payment_method: `pm_${org.orgId}`,
      metadata: { kind: 'auto_reload' },
    });
    const payment = await db.db
      .selectFrom('payments')
      .selectAll()
      .where('org_id', '=', org.orgId)
      .where('kind', '=', 'auto_reload')
      .executeTakeFirstOrThrow();
    expect(charges[0]!.idempotencyKey).toBe(`auto_reload:${payment.id}`);
    expect(payment.trigger_ref).toMatch(new RegExp(`^reload:${org.orgId}:`));

    // Stripe also reports the charge by webhook: same payment, no second credit.
    const wh = await fake.deliver(
      h.control.url,
      fake.signedEvent('payment_intent.succeeded', {
        id: payment.processor_ref,
        object: 'payment_intent',
        status: 'succeeded',
        amount: 2000,
        metadata: { payment_id: payment.id, kind: 'auto_reload' },
      }),
    );
    expect(wh.body.outcome).toBe('already_credited');

    await chargeLikeGateway(db, org, 1500); // 500 < 1000: next dip
    await waitFor(
      () => balance(org),
      (b) => b.credit_cents === 2500,
    );
    await sleep(500);
    expect(chargesFor(customer)).toHaveLength(2);
    expect((await balance(org)).credit_cents).toBe(2500);
    await expectLedgerConsistent(db);
  });

  it('records declines, pauses after three, and counts a late payment_failed webhook only once', async () => {
    const org = await seedOrg(db);
    const customer = await cardOnFile(org);
    fake.declineNextCharges = 3;
    await call(h.control.url, 'POST', '/v1/billing/auto-reload', {
      token: org.key,
      body: { enabled: true, threshold: 1000, amount: 2000 },
    });
    const paused = await waitFor(
      () => balance(org),
      (b) => b.auto_reload.paused === true,
    );
    expect(paused.auto_reload).toMatchObject({ paused: true, failures: 3 });
    await sleep(500);
    expect(chargesFor(customer)).toHaveLength(3);
    const failed = await db.db
      .selectFrom('payments')
      .selectAll()
      .where('org_id', '=', org.orgId)
      .where('kind', '=', 'auto_reload')
      .execute();
    expect(failed.map((p) => p.status)).toEqual(['failed', 'failed', 'failed']);
    expect(failed[0]!.failure_reason).toBe('card_declined');

    const wh = await fake.deliver(
      h.control.url,
      fake.signedEvent('payment_intent.payment_failed', {
        id: failed[0]!.processor_ref,
        object: 'payment_intent',
        status: 'requires_payment_method',
        last_payment_error: { code: 'card_declined' },
        metadata: { payment_id: failed[0]!.id, kind: 'auto_reload' },
      }),
    );
    expect(wh.body.outcome).toBe('no_change');
    expect((await balance(org)).auto_reload.failures).toBe(3);
    expect((await balance(org)).credit_cents).toBe(0);

    // Re-enabling lifts the pause; the card works again and the same dip is charged once.
    const re = await call(h.control.url, 'POST', '/v1/billing/auto-reload', {
      token: org.key,
      body: { enabled: true },
    });
    expect(re.body).toMatchObject({
      enabled: true,
      paused: false,
      failures: 0,
      threshold_cents: 1000,
      amount_cents: 2000,
    });
    await waitFor(
      () => balance(org),
      (b) => b.credit_cents === 2000,
    );
    await sleep(400);
    expect(chargesFor(customer)).toHaveLength(4);
  });

  it('opens the Stripe billing portal for the org customer', async () => {
    const org = await seedOrg(db);
    const r = await call(h.control.url, 'POST', '/v1/billing/portal', { token: org.session });
    expect(r.status).toBe(200);
    expect(r.body.portal_url).toMatch(/^https:\/\/billing\.stripe\.test\//);
    const acc = await db.db
      .selectFrom('billing_accounts')
      .selectAll()
      .where('org_id', '=', org.orgId)
      .executeTakeFirstOrThrow();
    expect(fake.callsTo('POST', '/v1/billing_portal/sessions').some((q) => q.body.customer === acc.customer_id)).toBe(
      true,
    );
  });

  it('keeps the newer card when an older setup_intent.succeeded arrives late', async () => {
    const org = await seedOrg(db);
    const now = Math.floor(Date.now() / 1000);
    const customer = await cardOnFile(org, 'pm_newer', now);
    const late = await fake.deliver(
      h.control.url,
      fake.signedEvent('setup_intent.succeeded', {
        id: 'seti_older',
        object: 'setup_intent',
        status: 'succeeded',
        created: now - 60,
        customer,
        payment_method: 'pm_older',
      }),
    );
    expect(late.body.outcome).toBe('newer_card_kept');
    const acc = await db.db
      .selectFrom('billing_accounts')
      .selectAll()
      .where('org_id', '=', org.orgId)
      .executeTakeFirstOrThrow();
    expect(acc.payment_method_id).toBe('pm_newer');
  });

  it('forgets the card and turns auto-reload off when the card is removed in the portal', async () => {
    const org = await seedOrg(db);
    await cardOnFile(org);
    await call(h.control.url, 'POST', '/v1/billing/auto-reload', {
      token: org.key,
      body: { enabled: true, threshold: 0, amount: 1000 },
    });
    const ev = await fake.deliver(
      h.control.url,
      fake.signedEvent('payment_method.detached', { id: `pm_${org.orgId}`, object: 'payment_method', customer: null }),
    );
    expect(ev.body.outcome).toBe('card_removed');
    expect(await balance(org)).toMatchObject({ card_on_file: false, card: null, auto_reload: { enabled: false } });
  });
});
