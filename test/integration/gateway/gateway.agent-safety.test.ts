import { describe, expect, it } from 'vitest';
import {
  useGatewayWorld,
  gw,
  balanceOf,
  keySpentOf,
  until,
  feedApplied,
  clearOfUtcMidnight,
  type World,
} from './fixture.js';
import type { RunningGateway } from '../../helpers/gateway.js';
import { seedOrg, seedKey, grantCredits, expectLedgerConsistent } from '../../helpers/db.js';
import { recordChange } from '../../../core/db/changes.js';

let w: World;
let g: RunningGateway;

useGatewayWorld((world, gateway) => {
  w = world;
  g = gateway;
});

const upstreamCalls = (path: string) => w.upstream.seen.filter((s) => s.url.startsWith(path)).length;

describe('Idempotency-Key', () => {
  it('a retry returns the first outcome with no second charge and no second upstream call', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 20);
    const before = upstreamCalls('/echo');
    const first = await gw(g.url, 'POST', `/${w.slug}/echo`, {
      key: c.key,
      body: 'pay-once',
      headers: { 'idempotency-key': 'job-1' },
    });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-svc-charged-cents')).toBe('2');
    const again = await gw(g.url, 'POST', `/${w.slug}/echo`, {
      key: c.key,
      body: 'pay-once',
      headers: { 'idempotency-key': 'job-1' },
    });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('x-svc-idempotent-replay')).toBe('true');
    expect(again.headers.get('x-svc-charged-cents')).toBe('0');
    expect(again.headers.get('x-svc-request-id')).toBe(first.headers.get('x-svc-request-id'));
    expect(upstreamCalls('/echo') - before).toBe(1);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(18);
  });

  it('concurrent retries while the first is in flight still call upstream once and charge once', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 20);
    const before = upstreamCalls('/users/55');
    const rs = await Promise.all(
      Array.from({ length: 8 }, () =>
        gw(g.url, 'GET', `/${w.slug}/users/55`, { key: c.key, headers: { 'idempotency-key': 'burst' } }),
      ),
    );
    expect(rs.every((r) => r.status === 200)).toBe(true);
    expect(new Set(rs.map((r) => r.text)).size).toBe(1);
    expect(upstreamCalls('/users/55') - before).toBe(1);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(17);
    await expectLedgerConsistent(w.h);
  });

  it('409 idempotency_conflict when the key is reused for a different request; keys are per org', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 20);
    expect(
      (await gw(g.url, 'POST', `/${w.slug}/echo`, { key: c.key, body: 'a', headers: { 'idempotency-key': 'k' } }))
        .status,
    ).toBe(200);
    const r = await gw(g.url, 'POST', `/${w.slug}/echo`, {
      key: c.key,
      body: 'b',
      headers: { 'idempotency-key': 'k' },
    });
    expect(r.status).toBe(409);
    expect(r.code).toBe('idempotency_conflict');
    const other = await seedOrg(w.h);
    await grantCredits(w.h, other.orgId, 20);
    expect(
      (await gw(g.url, 'POST', `/${w.slug}/echo`, { key: other.key, body: 'b', headers: { 'idempotency-key': 'k' } }))
        .status,
    ).toBe(200);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(18);
  });

  it('a failed first call (upstream 500) is not stored: the retry calls upstream again, nothing charged', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 20);
    const before = upstreamCalls('/fail');
    expect(
      (await gw(g.url, 'GET', `/${w.slug}/fail`, { key: c.key, headers: { 'idempotency-key': 'f' } })).status,
    ).toBe(500);
    expect(
      (await gw(g.url, 'GET', `/${w.slug}/fail`, { key: c.key, headers: { 'idempotency-key': 'f' } })).status,
    ).toBe(500);
    expect(upstreamCalls('/fail') - before).toBe(2);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(20);
  });
});

describe('quotes and price changes', () => {
  it('applies volume discount tiers per org and endpoint this month, and stamps the key last used', async () => {
    await clearOfUtcMidnight(); // tiers count this UTC month's calls: the four calls must not straddle a month start
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 100);
    await w.h.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('endpoints')
        .set({ discounts_json: JSON.stringify([{ min_calls: 2, percent_off: 50 }]) })
        .where('id', '=', w.endpointIds[1]!)
        .execute();
      await recordChange(trx, 'api', w.apiId, Date.now());
    });
    await feedApplied(w.h, g.url);
    const charges: string[] = [];
    for (let i = 0; i < 4; i++)
      charges.push(
        (await gw(g.url, 'POST', `/${w.slug}/echo`, { key: c.key, body: String(i) })).headers.get(
          'x-svc-charged-cents',
        )!,
      );
    expect(charges).toEqual(['2', '2', '1', '1']);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(94);
    expect(await keySpentOf(w.h, c.keyId)).toBe(6);
    // Stamped with the settle on SQLite; on PostgreSQL with the fold, within a housekeeping interval (1 s).
    const lastUsed = () =>
      w.h.db.selectFrom('api_keys').select('last_used_at').where('id', '=', c.keyId).executeTakeFirstOrThrow();
    expect(await until(async () => (await lastUsed()).last_used_at !== null, 5_000)).toBe(true);
    await w.h.db.transaction().execute(async (trx) => {
      await trx.updateTable('endpoints').set({ discounts_json: '[]' }).where('id', '=', w.endpointIds[1]!).execute();
      await recordChange(trx, 'api', w.apiId, Date.now());
    });
    await feedApplied(w.h, g.url);
  });

  it('a quote tells the price and whether every check passes, without calling upstream or charging', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 4);
    const before = w.upstream.seen.length;
    const q = await gw(g.url, 'GET', `/_quote/${w.slug}/users/9`, { key: c.key });
    expect(q.status).toBe(200);
    expect(q.json).toMatchObject({ price_cents: 3, would_pass: true, code: null, available_cents: 4 });
    const capped = await seedKey(w.h, c.orgId, { perCallMaxCents: 1 });
    const q2 = await gw(g.url, 'GET', `/_quote/${w.slug}/users/9`, { key: capped.key });
    expect(q2.json).toMatchObject({ price_cents: 3, would_pass: false, code: 'per_call_cap_exceeded' });
    const q3 = await gw(g.url, 'GET', `/_quote/${w.slug}/slow`, { key: c.key });
    expect(q3.json).toMatchObject({ price_cents: 5, would_pass: false, code: 'insufficient_credits' });
    expect(w.upstream.seen.length).toBe(before);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(4);
    const usage = await w.h.db.selectFrom('usage_events').select('id').where('org_id', '=', c.orgId).execute();
    expect(usage).toHaveLength(0);
  });

  it('a price change, a credit purchase and an unpublish by another process apply within a second', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 3);
    expect((await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key })).headers.get('x-svc-charged-cents')).toBe('3');
    expect((await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key })).status).toBe(402);
    await grantCredits(w.h, c.orgId, 50); // postEntry records an 'org' change
    await w.h.db.transaction().execute(async (trx) => {
      await trx.updateTable('endpoints').set({ price_cents: 7 }).where('id', '=', w.endpointIds[0]!).execute();
      await recordChange(trx, 'api', w.apiId, Date.now());
    });
    await feedApplied(w.h, g.url);
    const r = await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key, headers: { 'x-svc-max-price-cents': '7' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-svc-charged-cents')).toBe('7');
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(43);
    await w.h.db.transaction().execute(async (trx) => {
      await trx.updateTable('apis').set({ status: 'draft' }).where('id', '=', w.apiId).execute();
      await recordChange(trx, 'api', w.apiId, Date.now());
    });
    await feedApplied(w.h, g.url);
    expect((await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key })).code).toBe('listing_not_found');
    await w.h.db.transaction().execute(async (trx) => {
      await trx.updateTable('apis').set({ status: 'live' }).where('id', '=', w.apiId).execute();
      await trx.updateTable('endpoints').set({ price_cents: 3 }).where('id', '=', w.endpointIds[0]!).execute();
      await recordChange(trx, 'api', w.apiId, Date.now());
    });
    await feedApplied(w.h, g.url);
    await expectLedgerConsistent(w.h);
  });
});
