import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorld, gw, activateRequiredTerms, retireTerms, type World } from './fixture.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { seedOrg, seedKey, grantCredits, seedListing } from '../../helpers/db.js';
import { newId } from '../../../core/ids.js';

let w: World;
let g: RunningGateway;
beforeAll(async () => {
  w = await makeWorld();
  g = await startGateway(w.dataDir);
});
afterAll(async () => {
  await g?.stop();
  await w?.cleanup();
});

describe('402 bodies', () => {
  it('per_call_cap_exceeded and price_above_max carry price_cents and available_cents', async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 10);
    const capped = await seedKey(w.h, c.orgId, { perCallMaxCents: 2 });
    const perCall = await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: capped.key });
    expect(perCall.json).toMatchObject({ code: 'per_call_cap_exceeded', price_cents: 3, available_cents: 2 });
    const max = await gw(g.url, 'GET', `/${w.slug}/users/1`, { key: c.key, headers: { 'x-svc-max-price-cents': '1' } });
    expect(max.json).toMatchObject({ code: 'price_above_max', price_cents: 3, available_cents: 1 });
  });

  it('a quote refused by credits or caps says why in detail, like every other refusal', async () => {
    const c = await seedOrg(w.h);
    const q = await gw(g.url, 'GET', `/_quote/${w.slug}/users/1`, { key: c.key });
    expect(q.json).toMatchObject({ would_pass: false, code: 'insufficient_credits' });
    expect(q.json!.detail).toEqual(expect.stringContaining('3 cents'));
  });
});

describe('provider privacy', () => {
  it("a 502 names neither the upstream's host nor its port", async () => {
    const c = await seedOrg(w.h);
    await grantCredits(w.h, c.orgId, 10);
    const slug = `dead-${newId('api').slice(-6)}`;
    await seedListing(w.h, {
      orgId: w.provider.orgId,
      slug,
      baseUrl: 'http://127.0.0.1:1',
      endpoints: [{ method: 'GET', path: '/x', priceCents: 1 }],
    });
    const r = await gw(g.url, 'GET', `/${slug}/x`, { key: c.key });
    expect(r.status).toBe(502);
    expect(r.json!.detail).toContain('connection refused');
    expect(r.text).not.toContain('127.0.0.1');
    expect(r.text).not.toContain(':1');
  });
});

describe('terms', () => {
  it('a provider calls its own listing without accepting its own required terms; others still get 428', async () => {
    const docId = await activateRequiredTerms(w, g.url);
    try {
      expect((await gw(g.url, 'GET', `/${w.slug}/free`, { key: w.provider.key })).status).toBe(200);
      const other = await seedOrg(w.h);
      expect((await gw(g.url, 'GET', `/${w.slug}/free`, { key: other.key })).code).toBe('terms_not_accepted');
    } finally {
      await retireTerms(w, g.url, docId);
    }
  });
});
