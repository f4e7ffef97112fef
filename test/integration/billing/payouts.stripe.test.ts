import { describe, expect, it } from 'vitest';
import type { ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { chargeLikeGateway, grantCredits, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { useStripeControl, type FakeStripe } from '../../helpers/fake-stripe.js';
import { runAdmin } from './admin-cli.js';
import type { DbHandles } from '../../../core/db/database.js';
import { previousPeriod } from '../../../control/billing/payouts.service.js';

let fake: FakeStripe;
let h: ControlHarness;
let db: DbHandles;
const lastMonth = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 15);
const period = previousPeriod(Date.now());

useStripeControl((s) => ({ fake, h, db } = s));

/** A consumer's paid call to the provider's API at `at`, settled by the gateway's own writer (20 % platform fee). */
async function earn(providerOrgId: string, grossCents: number, at: number): Promise<void> {
  const consumer = await seedOrg(db);
  await grantCredits(db, consumer.orgId, grossCents);
  await chargeLikeGateway(db, consumer, grossCents, {
    providerOrgId,
    apiId: `api_of_${providerOrgId}`,
    at,
    platformFeeBps: 2000,
  });
}

async function onboarded(org: SeededOrg): Promise<string> {
  const r = await call(h.control.url, 'POST', '/v1/provider/connect', { token: org.key });
  expect(r.status).toBe(200);
  const acct = fake.accounts.get(r.body.account.account_id)!;
  acct.details_submitted = true;
  acct.payouts_enabled = true;
  const ev = await fake.deliver(
    h.control.url,
    fake.signedEvent('account.updated', {
      id: acct.id,
      object: 'account',
      details_submitted: true,
      payouts_enabled: true,
    }),
  );
  expect(ev.body.outcome).toBe('account_updated');
  return acct.id;
}

describe('Connect onboarding', () => {
  it('creates one connected account with controller properties and reuses it', async () => {
    const org = await seedOrg(db);
    const first = await call(h.control.url, 'POST', '/v1/provider/connect', { token: org.key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      created: true,
      account: { processor: 'stripe', details_submitted: false, payouts_enabled: false },
    });
    expect(first.body.onboarding_url).toMatch(/^https:\/\/connect\.stripe\.test\//);
    const second = await call(h.control.url, 'POST', '/v1/provider/connect', { token: org.session });
    expect(second.body).toMatchObject({ created: false, account: { account_id: first.body.account.account_id } });

    const creates = fake
      .callsTo('POST', '/v1/accounts')
      .filter((r) => (r.body.metadata as Record<string, string>).org_id === org.orgId);
    expect(creates).toHaveLength(1);
    expect(creates[0]!.body).toMatchObject({
      controller: {
        stripe_dashboard: { type: 'express' },
        fees: { payer: 'application' },
        losses: { payments: 'application' },
      },
      capabilities: { transfers: { requested: 'true' } },
    });
    expect(creates[0]!.body.type).toBeUndefined();
    expect(
      fake.callsTo('POST', '/v1/account_links').filter((r) => r.body.account === first.body.account.account_id),
    ).toHaveLength(2);
  });

  it('takes account status from the processor, so a stale account.updated cannot undo a newer one', async () => {
    const org = await seedOrg(db);
    const r = await call(h.control.url, 'POST', '/v1/provider/connect', { token: org.key });
    const id = r.body.account.account_id as string;
    fake.accounts.get(id)!.payouts_enabled = true;
    fake.accounts.get(id)!.details_submitted = true;
    // The payload says "not enabled" (an old snapshot delivered late); the handler re-reads the account.
    await fake.deliver(
      h.control.url,
      fake.signedEvent('account.updated', { id, object: 'account', details_submitted: false, payouts_enabled: false }),
    );
    const view = await call(h.control.url, 'GET', '/v1/provider/payouts', { token: org.key });
    expect(view.body.account).toMatchObject({ account_id: id, details_submitted: true, payouts_enabled: true });
  });

  it('needs provider:write', async () => {
    const org = await seedOrg(db, { scopes: ['catalog:read', 'proxy:call'] });
    const r = await call(h.control.url, 'POST', '/v1/provider/connect', { token: org.key });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('insufficient_scope');
  });
});

describe('payout run', () => {
  it('transfers each provider net above the minimum exactly once per period', async () => {
    const provider = await seedOrg(db);
    const acct = await onboarded(provider);
    const small = await seedOrg(db);
    await onboarded(small);
    for (const g of [1000, 1000, 500]) await earn(provider.orgId, g, lastMonth); // net 800 + 800 + 400
    await earn(provider.orgId, 625, Date.now()); // this month: not part of the closed period
    await earn(small.orgId, 100, lastMonth); // net 80, under the 1000-cent minimum

    const runs = await Promise.all([
      runAdmin(h.env, ['payouts', 'run', '--json', '--period', period]),
      runAdmin(h.env, ['payouts', 'run', '--json', '--period', period]),
    ]);
    const again = await runAdmin(h.env, ['payouts', 'run', '--json', '--period', period]);
    for (const r of [...runs, again]) expect(r.code, r.stderr).toBe(0);
    const outcomes = [...runs, again]
      .flatMap((r) => r.json.data.results)
      .filter((x: { provider_org_id: string }) => x.provider_org_id === provider.orgId);
    expect(outcomes.filter((o: { outcome: string }) => o.outcome === 'paid')).toHaveLength(1);
    expect(outcomes.filter((o: { outcome: string }) => o.outcome === 'already_done')).toHaveLength(2);
    expect(
      [...runs, again]
        .flatMap((r) => r.json.data.results)
        .find((x: { provider_org_id: string }) => x.provider_org_id === small.orgId),
    ).toMatchObject({ outcome: 'below_minimum', amount_cents: 80 });

    const transfers = fake.callsTo('POST', '/v1/transfers').filter((t) => t.body.destination === acct);
    expect(transfers).toHaveLength(1);
    expect(transfers[0]!.body).toMatchObject({ amount: '2000', currency: 'usd' });
    const payouts = await db.db
      .selectFrom('payouts')
      .selectAll()
      .where('provider_org_id', '=', provider.orgId)
      .execute();
    expect(payouts).toHaveLength(1);
    expect(payouts[0]).toMatchObject({ period, amount_cents: 2000, status: 'paid' });
    expect(transfers[0]!.idempotencyKey).toBe(`payout:${payouts[0]!.id}`);

    const view = await call(h.control.url, 'GET', '/v1/provider/payouts', { token: provider.key });
    expect(view.body.earnings).toEqual({
      gross_cents: 3125,
      fee_cents: 625,
      net_earned_cents: 2500,
      paid_out_cents: 2000,
      available_cents: 500,
    });
    expect(view.body.payouts).toHaveLength(1);
    expect((await runAdmin(h.env, ['ledger', 'check', '--json'])).code).toBe(0);
  });

  it('books a failed transfer back to the provider so it rolls into a later period', async () => {
    const provider = await seedOrg(db);
    await onboarded(provider);
    await earn(provider.orgId, 5000, lastMonth); // net 4000
    fake.failNextTransfers = 1;
    const r = await runAdmin(h.env, ['payouts', 'run', '--json', '--period', period]);
    expect(r.code).toBe(1);
    expect(
      r.json.data.results.find((x: { provider_org_id: string }) => x.provider_org_id === provider.orgId),
    ).toMatchObject({ outcome: 'failed', amount_cents: 4000 });
    const payout = await db.db
      .selectFrom('payouts')
      .selectAll()
      .where('provider_org_id', '=', provider.orgId)
      .executeTakeFirstOrThrow();
    expect(payout.status).toBe('failed');
    const view = await call(h.control.url, 'GET', '/v1/provider/payouts', { token: provider.key });
    expect(view.body.earnings).toMatchObject({ available_cents: 4000, paid_out_cents: 0 });
    const check = await runAdmin(h.env, ['ledger', 'check', '--json']);
    expect(check.code).toBe(0);
    expect(check.json).toMatchObject({ ok: true, data: { payout_mismatches: [] } });
  });
});
