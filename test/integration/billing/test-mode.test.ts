import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { csrfOf, WebClient } from '../../helpers/web-client.js';
import { chargeLikeGateway, expectLedgerConsistent, openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import type { DbHandles } from '../../../core/db/database.js';
import { postEntry } from '../../../control/ledger/ledger.service.js';
import { newId } from '../../../core/ids.js';
import { waitFor } from '../../helpers/wait.js';

let h: ControlHarness;
let db: DbHandles;

beforeAll(async () => {
  // No SVC_STRIPE_SECRET_KEY: the local test-payments back-end. A fast auto-reload sweep keeps the test short.
  h = await startControl({ SVC_AUTO_RELOAD_INTERVAL_MS: '100' });
  db = openTestDb(h.dataDir);
});

afterAll(async () => {
  await db?.close();
  await h?.stop();
});

/** Opens a test-payments page, or submits its card form like a browser (cookie + CSRF token from the site). */
async function page(url: string, card?: string): Promise<{ status: number; html: string }> {
  const web = new WebClient(new URL(url).origin);
  const path = url.slice(new URL(url).origin.length);
  if (card === undefined) return web.get(path);
  const csrf_token = csrfOf((await web.get('/login')).html);
  return web.post(path, { card, exp: '12/34', cvc: '123', csrf_token });
}

async function balance(org: SeededOrg) {
  return (await call(h.control.url, 'GET', '/v1/billing/balance', { token: org.key })).body;
}

async function saveCard(org: SeededOrg, card: string): Promise<void> {
  const setup = await call(h.control.url, 'POST', '/v1/billing/setup', { token: org.key });
  expect(setup.status).toBe(201);
  expect((await page(setup.body.setup_url, card)).status).toBe(200);
}

describe('local test-payments mode', () => {
  it('buys credits end to end over HTTP: checkout URL, labeled page, declined card, test card, balance credited once', async () => {
    const org = await seedOrg(db);
    const co = await call(h.control.url, 'POST', '/v1/billing/checkout', {
      token: org.key,
      body: { pack: 'standard' },
    });
    expect(co.status).toBe(201);
    expect(co.body.mode).toBe('test');
    expect(co.body.checkout_url.startsWith(`${h.control.url}/billing/test/checkout/cs_test_`)).toBe(true);

    const shown = await page(co.body.checkout_url);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain('TEST MODE - no real money');
    expect(shown.html).toContain('$20.00');

    const declined = await page(co.body.checkout_url, '4000 0000 0000 0002');
    expect(declined.status).toBe(402);
    expect((await balance(org)).credit_cents).toBe(0);
    expect((await page(co.body.checkout_url, '1234 5678 9012 3456')).status).toBe(400);

    const paid = await page(co.body.checkout_url, '4242 4242 4242 4242');
    expect(paid.status).toBe(200);
    expect(paid.html).toContain('$21.00');
    expect((await page(co.body.checkout_url, '4242424242424242')).status).toBe(200);

    expect((await balance(org)).credit_cents).toBe(2100);
    const entries = await db.db.selectFrom('ledger_entries').selectAll().where('org_id', '=', org.orgId).execute();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      kind: 'purchase',
      amount_cents: 2100,
      idempotency_key: `purchase:${co.body.payment_id}`,
    });
    await expectLedgerConsistent(db);
  });

  it('saves a card through the setup page and shows it on the balance and the portal', async () => {
    const org = await seedOrg(db);
    await saveCard(org, '4242 4242 4242 4242');
    const bal = await balance(org);
    expect(bal.card_on_file).toBe(true);
    expect(bal.card).toEqual({ brand: 'visa', last4: '4242' });
    const portal = await call(h.control.url, 'POST', '/v1/billing/portal', { token: org.session });
    expect(portal.status).toBe(200);
    const html = await page(portal.body.portal_url);
    expect(html.html).toContain('ending 4242');
    expect((await page(portal.body.portal_url.replace(/.$/, (ch: string) => (ch === 'A' ? 'B' : 'A')))).status).toBe(
      404,
    );
  });

  it('refuses to enable auto-reload without a card on file', async () => {
    const org = await seedOrg(db);
    const r = await call(h.control.url, 'POST', '/v1/billing/auto-reload', {
      token: org.key,
      body: { enabled: true, threshold: 1000, amount: 500 },
    });
    expect(r.status).toBe(402);
    expect(r.body.code).toBe('card_required');
  });

  it('auto-reload takes threshold_cents/amount_cents; the old threshold/amount still work unless they disagree', async () => {
    const org = await seedOrg(db);
    await saveCard(org, '4242 4242 4242 4242');
    const set = (body: Record<string, unknown>) =>
      call(h.control.url, 'POST', '/v1/billing/auto-reload', { token: org.key, body });
    const canonical = await set({ enabled: true, threshold_cents: 700, amount_cents: 600 });
    expect(canonical.status).toBe(200);
    expect(canonical.body).toMatchObject({ enabled: true, threshold_cents: 700, amount_cents: 600 });
    const old = await set({ enabled: true, threshold: 800 });
    expect(old.body).toMatchObject({ threshold_cents: 800, amount_cents: 600 });
    const conflict = await set({ enabled: true, amount_cents: 600, amount: 900 });
    expect([conflict.status, conflict.body.code, conflict.body.errors[0].path]).toEqual([
      400,
      'validation_failed',
      'amount',
    ]);
    const tooSmall = await set({ enabled: true, amount_cents: 1 });
    expect([tooSmall.status, tooSmall.body.errors[0].path]).toEqual([400, 'amount_cents']);
    const row = await db.db
      .selectFrom('billing_accounts')
      .selectAll()
      .where('org_id', '=', org.orgId)
      .executeTakeFirstOrThrow();
    expect([row.auto_reload_threshold_cents, row.auto_reload_amount_cents]).toEqual([800, 600]);
  });

  it('auto-reloads once per dip: one charge while under the threshold, another only after the next dip', async () => {
    const org = await seedOrg(db);
    await db.db.transaction().execute((trx) =>
      postEntry(
        trx,
        {
          orgId: org.orgId,
          kind: 'adjustment',
          amountCents: 1200,
          reason: 'seed',
          idempotencyKey: `seed:${org.orgId}`,
        },
        Date.now(),
      ),
    );
    await saveCard(org, '4242 4242 4242 4242');
    const en = await call(h.control.url, 'POST', '/v1/billing/auto-reload', {
      token: org.key,
      body: { enabled: true, threshold: 1000, amount: 500 },
    });
    expect(en.status).toBe(200);
    expect(en.body).toMatchObject({ enabled: true, threshold_cents: 1000, amount_cents: 500, paused: false });

    await chargeLikeGateway(db, org, 300); // 900 < 1000: a dip
    const after = await waitFor(
      () => balance(org),
      (b) => b.credit_cents === 1400,
    );
    expect(after.credit_cents).toBe(1400);
    await new Promise((r) => setTimeout(r, 600)); // several more sweeps
    const reloads = () =>
      db.db
        .selectFrom('ledger_entries')
        .selectAll()
        .where('org_id', '=', org.orgId)
        .where('kind', '=', 'auto_reload')
        .execute();
    expect(await reloads()).toHaveLength(1);

    await chargeLikeGateway(db, org, 500); // 900 again: the next dip
    await waitFor(reloads, (r) => r.length === 2);
    await new Promise((r) => setTimeout(r, 600));
    expect(await reloads()).toHaveLength(2);
    expect((await balance(org)).credit_cents).toBe(1400);
    const payments = await db.db
      .selectFrom('payments')
      .selectAll()
      .where('org_id', '=', org.orgId)
      .where('kind', '=', 'auto_reload')
      .execute();
    expect(payments.map((p) => p.status)).toEqual(['succeeded', 'succeeded']);
    await expectLedgerConsistent(db);
  });

  it('pauses auto-reload after repeated failed charges and credits nothing', async () => {
    const org = await seedOrg(db);
    await saveCard(org, '4000 0000 0000 0341'); // attaches, later charges fail
    await call(h.control.url, 'POST', '/v1/billing/auto-reload', {
      token: org.key,
      body: { enabled: true, threshold: 400, amount: 500 },
    });
    const bal = await waitFor(
      () => balance(org),
      (b) => b.auto_reload.paused === true,
    );
    expect(bal.auto_reload).toMatchObject({ enabled: true, paused: true, failures: 3 });
    await new Promise((r) => setTimeout(r, 500));
    const payments = await db.db
      .selectFrom('payments')
      .selectAll()
      .where('org_id', '=', org.orgId)
      .where('kind', '=', 'auto_reload')
      .execute();
    expect(payments).toHaveLength(3);
    expect(payments.every((p) => p.status === 'failed')).toBe(true);
    expect((await balance(org)).credit_cents).toBe(0);

    // A working card lifts the pause; the same dip is retried and credited once.
    await saveCard(org, '4242 4242 4242 4242');
    const healed = await waitFor(
      () => balance(org),
      (b) => b.credit_cents === 500,
    );
    expect(healed.credit_cents).toBe(500);
    expect(healed.auto_reload).toMatchObject({ paused: false, failures: 0 });
  });

  it('recovers from a reload interrupted mid-charge: marks it failed, then reloads once', async () => {
    const org = await seedOrg(db);
    await saveCard(org, '4242 4242 4242 4242');
    const stale = Date.now() - 3_600_000;
    await db.db
      .insertInto('payments')
      .values({
        id: newId('pay', stale),
        org_id: org.orgId,
        kind: 'auto_reload',
        processor: 'test',
        processor_ref: null,
        pack_id: null,
        amount_paid_cents: 500,
        credit_cents: 500,
        status: 'open',
        failure_reason: null,
        trigger_ref: `stale:${org.orgId}`,
        created_at: stale,
        completed_at: null,
      })
      .execute();
    await call(h.control.url, 'POST', '/v1/billing/auto-reload', {
      token: org.key,
      body: { enabled: true, threshold: 400, amount: 500 },
    });
    await waitFor(
      () => balance(org),
      (b) => b.credit_cents === 500,
    );
    await new Promise((r) => setTimeout(r, 500));
    const payments = await db.db
      .selectFrom('payments')
      .selectAll()
      .where('org_id', '=', org.orgId)
      .where('kind', '=', 'auto_reload')
      .orderBy('created_at')
      .execute();
    expect(payments.map((p) => [p.status, p.failure_reason])).toEqual([
      ['failed', 'interrupted: outcome unknown'],
      ['succeeded', null],
    ]);
    expect((await balance(org)).credit_cents).toBe(500);
  });

  it('onboards a provider on the test Connect page and reuses the account', async () => {
    const org = await seedOrg(db);
    const first = await call(h.control.url, 'POST', '/v1/provider/connect', { token: org.key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      created: true,
      account: { processor: 'test', details_submitted: false, payouts_enabled: false },
    });
    const shown = await page(first.body.onboarding_url);
    expect(shown.html).toContain('TEST MODE - no real money');
    const web = new WebClient(h.control.url);
    const onboarding = first.body.onboarding_url.slice(h.control.url.length);
    expect((await web.post(onboarding, {})).status).toBe(403); // no CSRF token: refused, nothing changes
    const res = await web.post(onboarding, { csrf_token: csrfOf((await web.get(onboarding)).html) });
    expect(res.status).toBe(200);
    const again = await call(h.control.url, 'POST', '/v1/provider/connect', { token: org.key });
    expect(again.body).toMatchObject({
      created: false,
      account: { account_id: first.body.account.account_id, payouts_enabled: true },
    });
  });
});
