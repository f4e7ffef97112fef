/**
 * Outbound webhooks and money alerts (docs/webhooks.md) against a real receiver on loopback that verifies every
 * signature the way a Stripe integration does: signed `t.body`, stable event ids across retries, backoff, a replay,
 * an endpoint disabled (and its org mailed) after 3 days of failures, and the alert detector's balance.low and
 * key.cap_reached, each announced once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { csrfOf, WebClient } from '../../helpers/web-client.js';
import { createLiveListing } from '../../helpers/catalog.js';
import { runSvc, tempHome } from '../../helpers/cli.js';
import { chargeLikeGateway, grantCredits, openTestDb, seedKey, seedOrg, type SeededOrg } from '../../helpers/db.js';
import type { DbHandles } from '../../../core/db/database.js';

interface Received {
  path: string;
  id: string;
  type: string;
  data: Record<string, unknown>;
  attempt: string | undefined;
  signatureOk: boolean;
}

/** A receiver: `secrets` per path verify signatures; `failFirst` answers 500 that many times per path. */
async function startReceiver() {
  const received: Received[] = [];
  const secrets = new Map<string, string>();
  const failures = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '/';
      const header = String(req.headers['svc-signature'] ?? '');
      const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
      const secret = secrets.get(path) ?? '';
      const expected = m ? createHmac('sha256', secret).update(`${m[1]}.${raw}`).digest() : Buffer.alloc(32);
      const signatureOk = !!m && timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'));
      const body = JSON.parse(raw) as { id: string; type: string; data: Record<string, unknown> };
      received.push({
        path,
        id: body.id,
        type: body.type,
        data: body.data,
        attempt: req.headers['svc-delivery-attempt'] as string | undefined,
        signatureOk,
      });
      const left = failures.get(path) ?? 0;
      if (left > 0) {
        failures.set(path, left - 1);
        res.writeHead(500).end('not yet');
        return;
      }
      res.writeHead(signatureOk ? 200 : 400).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, secrets, failures, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let h: ControlHarness;
let db: DbHandles;
let rx: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  rx = await startReceiver();
  h = await startControl({
    SVC_WEBHOOK_POLL_MS: '50',
    SVC_WEBHOOK_RETRY_BASE_MS: '100',
    SVC_ALERTS_INTERVAL_MS: '150',
  });
  db = openTestDb(h.dataDir);
});
afterAll(async () => {
  await db?.close();
  await h?.stop();
  await rx?.close();
});

async function subscribe(org: SeededOrg, path: string, events: string[]) {
  const r = await call(h.control.url, 'POST', '/v1/webhooks', {
    token: org.session,
    body: { url: rx.url + path, events },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect(r.body.secret).toMatch(/^whsec_/);
  rx.secrets.set(path, r.body.secret);
  return r.body as { id: string; secret: string };
}

/** Polls `cond` until it holds (bounded), else fails with `what`. */
async function waitFor(cond: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const eventsAt = (path: string, type?: string) =>
  rx.received.filter((r) => r.path === path && (type === undefined || r.type === type));

describe('webhooks', () => {
  it('registers an endpoint, shows the secret once, and test-sends a signed event', async () => {
    const org = await seedOrg(db);
    const ep = await subscribe(org, '/a', ['payment.succeeded']);
    const listed = await call(h.control.url, 'GET', '/v1/webhooks', { token: org.session });
    expect(listed.body.data).toHaveLength(1);
    expect(JSON.stringify(listed.body)).not.toContain(ep.secret);
    expect(listed.body.data[0]).toMatchObject({ id: ep.id, events: ['payment.succeeded'], status: 'enabled' });
    // Stored encrypted, never in plaintext.
    const stored = await db.db
      .selectFrom('webhook_endpoints')
      .select('secret_enc')
      .where('id', '=', ep.id)
      .executeTakeFirstOrThrow();
    expect(stored.secret_enc).not.toContain(ep.secret);

    const sent = await call(h.control.url, 'POST', `/v1/webhooks/${ep.id}/test`, { token: org.session });
    expect(sent.status).toBe(202);
    await waitFor(() => eventsAt('/a', 'webhook.test').length === 1, 10_000);
    expect(eventsAt('/a')[0]).toMatchObject({ id: sent.body.event_id, signatureOk: true, attempt: '1' });
    await waitFor(async () => {
      const log = await call(h.control.url, 'GET', `/v1/webhooks/${ep.id}/deliveries`, { token: org.session });
      return log.body.data[0]?.status === 'delivered';
    }, 10_000);
  });

  it('refuses bad input with a stable code and changes nothing', async () => {
    const org = await seedOrg(db);
    const bad = async (body: unknown, token = org.session) =>
      call(h.control.url, 'POST', '/v1/webhooks', { token, body });
    expect((await bad({ url: rx.url, events: ['nope'] })).body.code).toBe('validation_failed');
    expect((await bad({ url: rx.url, events: [] })).body.code).toBe('validation_failed');
    expect((await bad({ url: 'ftp://example.com/x', events: ['payout.paid'] })).body.code).toBe('url_not_allowed');
    expect((await bad({ url: 'https://u:p@example.com/x', events: ['payout.paid'] })).body.code).toBe(
      'url_not_allowed',
    );
    const { key } = await seedKey(db, org.orgId, { scopes: ['catalog:read', 'proxy:call'] });
    const noScope = await bad({ url: rx.url, events: ['payout.paid'] }, key);
    expect(noScope.status).toBe(403);
    expect(noScope.body.code).toBe('insufficient_scope');
    const n = await db.db.selectFrom('webhook_endpoints').select('id').where('org_id', '=', org.orgId).execute();
    expect(n).toHaveLength(0);
  });

  it('sends payment.succeeded when a purchase is credited, and retries a failing receiver with the same event id', async () => {
    const org = await seedOrg(db);
    await subscribe(org, '/pay', ['payment.succeeded']);
    rx.failures.set('/pay', 2);
    const co = await call(h.control.url, 'POST', '/v1/billing/checkout', {
      token: org.key,
      body: { pack: 'standard' },
    });
    expect(co.status).toBe(201);
    const web = new WebClient(h.control.url);
    const csrf_token = csrfOf((await web.get('/login')).html);
    const path = co.body.checkout_url.slice(h.control.url.length);
    expect((await web.post(path, { card: '4242 4242 4242 4242', exp: '12/34', cvc: '123', csrf_token })).status).toBe(
      200,
    );
    await waitFor(() => eventsAt('/pay').length === 3, 15_000);
    const got = eventsAt('/pay');
    expect(new Set(got.map((g) => g.id)).size).toBe(1);
    expect(got.map((g) => g.attempt)).toEqual(['1', '2', '3']);
    expect(got.every((g) => g.signatureOk)).toBe(true);
    expect(got[0]).toMatchObject({
      type: 'payment.succeeded',
      data: { payment_id: co.body.payment_id, credit_cents: 2100 },
    });
  });

  it('announces balance.low once per top-up and key.cap_reached once per cap, by webhook and by mail', async () => {
    const org = await seedOrg(db);
    await subscribe(org, '/alerts', ['balance.low', 'key.cap_reached']);
    await grantCredits(db, org.orgId, 1500);
    const patched = await call(h.control.url, 'PATCH', '/v1/alerts', {
      token: org.session,
      body: { balance_low_cents: 1000 },
    });
    expect(patched.body).toMatchObject({
      balance_low_cents: 1000,
      effective_balance_low_cents: 1000,
      email_alerts: true,
    });
    const capped = await seedKey(db, org.orgId, { budgetCents: 600 });
    await chargeLikeGateway(db, { orgId: org.orgId, keyId: capped.keyId }, 600);
    await waitFor(() => eventsAt('/alerts', 'balance.low').length === 1, 10_000);
    await waitFor(() => eventsAt('/alerts', 'key.cap_reached').length === 1, 10_000);
    expect(eventsAt('/alerts', 'balance.low')[0]!.data).toEqual({ balance_cents: 900, threshold_cents: 1000 });
    expect(eventsAt('/alerts', 'key.cap_reached')[0]!.data).toMatchObject({
      key_id: capped.keyId,
      cap: 'budget',
      cap_cents: 600,
      spent_cents: 600,
    });
    // Several detector rounds later, still once each.
    await new Promise((r) => setTimeout(r, 800));
    expect(eventsAt('/alerts', 'balance.low')).toHaveLength(1);
    expect(eventsAt('/alerts', 'key.cap_reached')).toHaveLength(1);
    // A top-up re-arms balance.low: the next dip is announced again.
    await grantCredits(db, org.orgId, 1000);
    const other = await seedKey(db, org.orgId);
    await chargeLikeGateway(db, { orgId: org.orgId, keyId: other.keyId }, 1200);
    await waitFor(() => eventsAt('/alerts', 'balance.low').length === 2, 10_000);
    const mails = await db.db.selectFrom('outbox').select('subject').where('to_addr', '=', org.email).execute();
    expect(mails.map((m) => m.subject).filter((s) => s.includes('balance is low'))).toHaveLength(2);
    expect(mails.map((m) => m.subject).filter((s) => s.includes('reached its budget'))).toHaveLength(1);
  });

  it('turning email alerts off stops the mails but not the webhooks', async () => {
    const org = await seedOrg(db);
    await subscribe(org, '/quiet', ['balance.low']);
    await call(h.control.url, 'PATCH', '/v1/alerts', {
      token: org.session,
      body: { balance_low_cents: 5000, email_alerts: false },
    });
    await grantCredits(db, org.orgId, 100);
    await waitFor(() => eventsAt('/quiet', 'balance.low').length === 1, 10_000);
    const mails = await db.db.selectFrom('outbox').select('subject').where('to_addr', '=', org.email).execute();
    expect(mails).toHaveLength(0);
  });

  it('disables an endpoint after 3 days of failures, mails the org, and replays a delivery on request', async () => {
    const org = await seedOrg(db);
    const ep = await subscribe(org, '/down', ['payment.succeeded']);
    rx.failures.set('/down', 1_000_000);
    const sent = await call(h.control.url, 'POST', `/v1/webhooks/${ep.id}/test`, { token: org.session });
    await waitFor(() => eventsAt('/down').length >= 2, 10_000);
    const log = await call(h.control.url, 'GET', `/v1/webhooks/${ep.id}/deliveries`, { token: org.session });
    expect(log.body.data[0]).toMatchObject({ event_id: sent.body.event_id, status: 'pending', last_status_code: 500 });
    expect(log.body.data[0].attempts).toBeGreaterThanOrEqual(1);
    // The endpoint has been failing for three days.
    await db.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: Date.now() - 3 * 86_400_000 - 1000 })
      .where('id', '=', ep.id)
      .execute();
    await waitFor(async () => {
      const got = await call(h.control.url, 'GET', `/v1/webhooks/${ep.id}`, { token: org.session });
      return got.body.status === 'disabled';
    }, 15_000);
    const mails = await db.db
      .selectFrom('outbox')
      .select(['subject', 'body_text'])
      .where('to_addr', '=', org.email)
      .execute();
    expect(mails.find((m) => m.subject.includes('webhook endpoint was disabled'))?.body_text).toContain(
      rx.url + '/down',
    );
    const after = await call(h.control.url, 'GET', `/v1/webhooks/${ep.id}/deliveries`, { token: org.session });
    expect(after.body.data[0].status).toBe('failed');
    // A replay needs the endpoint enabled; then the same event arrives once more.
    const refused = await call(h.control.url, 'POST', `/v1/webhooks/deliveries/${after.body.data[0].id}/replay`, {
      token: org.session,
    });
    expect(refused.body.code).toBe('invalid_state');
    rx.failures.set('/down', 0);
    expect(
      (await call(h.control.url, 'POST', `/v1/webhooks/${ep.id}/enable`, { token: org.session })).body.status,
    ).toBe('enabled');
    const before = eventsAt('/down').length;
    const replay = await call(h.control.url, 'POST', `/v1/webhooks/deliveries/${after.body.data[0].id}/replay`, {
      token: org.session,
    });
    expect(replay.status).toBe(200);
    await waitFor(() => eventsAt('/down').length > before, 10_000);
    expect(eventsAt('/down').at(-1)).toMatchObject({ id: sent.body.event_id, signatureOk: true });
  });

  it("tells a listing's recent callers about a scheduled price increase and new terms; others hear nothing", async () => {
    const provider = await seedOrg(db);
    const caller = await seedOrg(db);
    const bystander = await seedOrg(db);
    await subscribe(caller, '/caller', ['listing.price_increase_scheduled', 'terms.updated']);
    await subscribe(bystander, '/bystander', ['listing.price_increase_scheduled', 'terms.updated']);
    const listing = await createLiveListing(h.control.url, provider.session, {
      baseUrl: 'http://127.0.0.1:9',
      prices: { 'GET /ping': 1 },
    });
    await grantCredits(db, caller.orgId, 100);
    await chargeLikeGateway(db, { orgId: caller.orgId, keyId: caller.keyId }, 1, {
      apiId: listing.apiId,
      providerOrgId: provider.orgId,
    });
    const raised = await call(h.control.url, 'PUT', `/v1/provider/apis/${listing.apiId}/pricing`, {
      token: provider.session,
      body: { endpoints: [{ endpoint_id: listing.endpoints['GET /ping'], price_cents: 5 }] },
    });
    expect(raised.status, JSON.stringify(raised.body)).toBe(200);
    await waitFor(() => eventsAt('/caller', 'listing.price_increase_scheduled').length === 1, 10_000);
    const announced = eventsAt('/caller', 'listing.price_increase_scheduled')[0]!.data as {
      slug: string;
      endpoints: { old_price_cents: number; new_price_cents: number; effective_at: string }[];
    };
    expect(announced.slug).toBe(listing.slug);
    expect(announced.endpoints[0]).toMatchObject({ old_price_cents: 1, new_price_cents: 5 });
    // At least the notice period ahead (SVC_PRICE_NOTICE_DAYS, 7 by default).
    expect(Date.parse(announced.endpoints[0]!.effective_at) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);

    const doc = await call(h.control.url, 'POST', '/v1/provider/documents', {
      token: provider.session,
      body: {
        kind: 'terms',
        source: 'hosted',
        version: '2.0.0',
        markdown: '# Terms',
        api_id: listing.apiId,
        acceptance_mode: 'required',
      },
    });
    expect(doc.status, JSON.stringify(doc.body)).toBe(201);
    const act = await call(h.control.url, 'POST', `/v1/provider/documents/${doc.body.document_id}/activate`, {
      token: provider.session,
    });
    expect(act.status, JSON.stringify(act.body)).toBe(200);
    await waitFor(() => eventsAt('/caller', 'terms.updated').length === 1, 10_000);
    expect(eventsAt('/caller', 'terms.updated')[0]!.data).toMatchObject({ slug: listing.slug, version: '2.0.0' });
    await new Promise((r) => setTimeout(r, 300));
    expect(eventsAt('/bystander')).toHaveLength(0);
  });

  it('the dashboard page registers, test-sends and deletes an endpoint and sets alerts, refusing bad forms in place', async () => {
    const org = await seedOrg(db);
    const web = new WebClient(h.control.url);
    web.cookies.set('svc_session', org.session);
    expect((await web.get('/dashboard/webhooks')).status).toBe(200);
    const none = await web.submit('/dashboard/webhooks', '/dashboard/webhooks', { url: `${rx.url}/page` });
    expect(none.status).toBe(400);
    expect(none.html).toContain('Choose at least one event.');
    expect(none.html).toContain(`value="${rx.url}/page"`);
    const page = await web.get('/dashboard/webhooks');
    const body = new URLSearchParams({ url: `${rx.url}/page`, csrf_token: csrfOf(page.html) });
    body.append('events', 'balance.low');
    body.append('events', 'payment.succeeded');
    const created = await fetch(`${h.control.url}/dashboard/webhooks`, {
      method: 'POST',
      body: body.toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
    });
    expect(created.status).toBe(201);
    const html = await created.text();
    const secret = /data-testid="webhook-secret">\s*(whsec_[A-Za-z0-9]+)/.exec(html)?.[1];
    expect(secret).toBeDefined();
    rx.secrets.set('/page', secret!);
    const listed = await call(h.control.url, 'GET', '/v1/webhooks', { token: org.session });
    expect(listed.body.data[0]).toMatchObject({ events: ['balance.low', 'payment.succeeded'] });
    const id = listed.body.data[0].id as string;
    expect((await web.submit('/dashboard/webhooks', `/dashboard/webhooks/${id}/test`, {})).status).toBe(303);
    await waitFor(() => eventsAt('/page', 'webhook.test').length === 1, 10_000);
    expect(eventsAt('/page')[0]!.signatureOk).toBe(true);
    const alerts = await web.submit('/dashboard/webhooks', '/dashboard/webhooks/alerts', { balance_low: '2.50' });
    expect(alerts.status).toBe(303);
    expect((await call(h.control.url, 'GET', '/v1/alerts', { token: org.session })).body).toMatchObject({
      balance_low_cents: 250,
      email_alerts: false,
    });
    const bad = await web.submit('/dashboard/webhooks', '/dashboard/webhooks/alerts', { balance_low: 'lots' });
    expect(bad.status).toBe(400);
    expect((await web.submit('/dashboard/webhooks', `/dashboard/webhooks/${id}/delete`, {})).status).toBe(303);
    expect((await call(h.control.url, 'GET', '/v1/webhooks', { token: org.session })).body.data).toHaveLength(0);
  });

  it('the svc CLI registers, lists, test-sends, shows deliveries, deletes, and sets alerts', async () => {
    const org = await seedOrg(db);
    const home = tempHome();
    const svc = (...args: string[]) =>
      runSvc(args, { home: home.home, env: { SVC_API_URL: h.control.url, SVC_API_KEY: org.key } });
    try {
      const refused = await svc('webhooks', 'create', '--url', `${rx.url}/cli`, '--events', 'nope');
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('unknown event nope');
      const created = await svc('webhooks', 'create', '--url', `${rx.url}/cli`, '--events', 'balance.low', '--json');
      expect(created.code, created.stderr).toBe(0);
      const { id, secret } = created.json().data as { id: string; secret: string };
      rx.secrets.set('/cli', secret);
      const listed = await svc('webhooks', 'list');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain('enabled');
      expect(listed.stdout).not.toContain(secret);
      expect((await svc('webhooks', 'list', '--json')).json().data.data[0]).toMatchObject({ url: `${rx.url}/cli` });
      expect((await svc('webhooks', 'test', id)).code).toBe(0);
      await waitFor(() => eventsAt('/cli', 'webhook.test').length === 1, 10_000);
      expect(eventsAt('/cli')[0]!.signatureOk).toBe(true);
      await waitFor(async () => {
        const log = await svc('webhooks', 'deliveries', id, '--json');
        return log.json().data.data[0]?.status === 'delivered';
      }, 10_000);
      const set = await svc('alerts', 'set', '--balance-low', '300', '--email-alerts', 'off', '--json');
      expect(set.json().data).toMatchObject({ balance_low_cents: 300, email_alerts: false });
      expect((await svc('alerts', 'show')).stdout).toContain('below $3.00');
      expect((await svc('webhooks', 'delete', id)).code).toBe(0);
      expect((await svc('webhooks', 'list', '--json')).json().data.data).toEqual([]);
    } finally {
      home.cleanup();
    }
  }, 60_000);
});
