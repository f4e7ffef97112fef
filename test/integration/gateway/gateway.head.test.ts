/**
 * HEAD on a paid endpoint is charged as its GET (docs/gateway.md "What is charged"): its headers are the provider's
 * data too. A free endpoint stays free, a failed upstream is not charged, and every cap applies as for GET.
 */
import { describe, expect, it } from 'vitest';
import { gw, balanceOf, useGatewayWorld, type World } from './fixture.js';
import type { RunningGateway } from '../../helpers/gateway.js';
import { seedOrg, grantCredits, expectLedgerConsistent, usageWithIds } from '../../helpers/db.js';

let w: World;
let g: RunningGateway;
useGatewayWorld((world, gateway) => {
  w = world;
  g = gateway;
});

async function usage(orgId: string) {
  return w.h.db
    .selectFrom(usageWithIds(w.h.db))
    .select(['method', 'status', 'price_cents', 'charged_cents'])
    .where('org_id', '=', orgId)
    .execute();
}

describe('HEAD on a paid endpoint', () => {
  it("is charged the GET endpoint's price, answered without a body, and recorded as HEAD", async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 10);
    const seen = w.upstream.seen.length;
    const r = await gw(g.url, 'HEAD', `/${w.slug}/users/1`, { key: c.key });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    expect(r.headers.get('x-upstream')).toBe('yes');
    expect(r.headers.get('x-svc-price-cents')).toBe('3');
    expect(r.headers.get('x-svc-charged-cents')).toBe('3');
    expect(r.headers.get('x-svc-balance-cents')).toBe('7');
    expect(w.upstream.seen.length).toBe(seen + 1);
    expect(w.upstream.seen.at(-1)!.method).toBe('HEAD');
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(7);
    expect(await usage(c.orgId)).toEqual([{ method: 'HEAD', status: 200, price_cents: 3, charged_cents: 3 }]);
    await expectLedgerConsistent(w.h);
  });

  it('is refused like its GET when credit is short (402), and nothing reaches the upstream', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 2);
    const seen = w.upstream.seen.length;
    const r = await gw(g.url, 'HEAD', `/${w.slug}/users/1`, { key: c.key });
    expect(r.status).toBe(402);
    expect(r.headers.get('x-svc-price-cents')).toBe('3');
    expect(r.headers.get('x-svc-charged-cents')).toBe('0');
    expect(w.upstream.seen.length).toBe(seen);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(2);
  });

  it('needs a key (401) and honours X-Svc-Max-Price-Cents', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 10);
    expect((await gw(g.url, 'HEAD', `/${w.slug}/users/1`)).status).toBe(401);
    const capped = await gw(g.url, 'HEAD', `/${w.slug}/users/1`, {
      key: c.key,
      headers: { 'x-svc-max-price-cents': '2' },
    });
    expect(capped.status).toBe(402);
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(10);
  });

  it('is quoted at the GET price', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 10);
    const q = await gw(g.url, 'HEAD', `/_quote/${w.slug}/users/1`, { key: c.key });
    expect(q.status).toBe(200);
    expect(q.headers.get('x-svc-price-cents')).toBe('3');
  });

  it('is not charged when the upstream fails (5xx)', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 10);
    const r = await gw(g.url, 'HEAD', `/${w.slug}/fail`, { key: c.key });
    expect(r.status).toBe(500);
    expect(r.headers.get('x-svc-charged-cents')).toBe('0');
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(10);
  });
});

describe('HEAD on a free endpoint', () => {
  it('stays free', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 10);
    const r = await gw(g.url, 'HEAD', `/${w.slug}/free`, { key: c.key });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-svc-charged-cents')).toBe('0');
    expect((await balanceOf(w.h, c.orgId)).credit_cents).toBe(10);
  });
});
