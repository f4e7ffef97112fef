/**
 * Secret injection cannot be bypassed or shadowed by the consumer (docs/gateway.md "What the upstream gets"): with
 * query injection named `k`, the consumer's own `k` (however spelled) is removed before the provider's secret is
 * added, as header injection replaces a consumer's header of the same name.
 */
import { describe, expect, it } from 'vitest';
import { gw, makeWorld, type World } from './fixture.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { seedOrg, grantCredits } from '../../helpers/db.js';
import { afterAll, beforeAll } from 'vitest';

const SECRET = 'sek/ret 1';

let q: World;
let qg: RunningGateway;
let h: World;
let hg: RunningGateway;
beforeAll(async () => {
  q = await makeWorld({ injection: 'query', injectionName: 'k', secret: SECRET });
  qg = await startGateway(q.dataDir);
  h = await makeWorld({ injection: 'header', injectionName: 'X-Api-Key', secret: SECRET });
  hg = await startGateway(h.dataDir);
});
afterAll(async () => {
  await qg?.stop();
  await hg?.stop();
  await q?.cleanup();
  await h?.cleanup();
});

async function callQuery(query: string): Promise<string> {
  const c = await seedOrg(q.h);
  await grantCredits(q.h, c.orgId, 100);
  const before = q.upstream.seen.length;
  const r = await gw(qg.url, 'GET', `/${q.slug}/users/1${query}`, { key: c.key });
  expect(r.status).toBe(200);
  expect(q.upstream.seen.length).toBe(before + 1);
  return new URL(q.upstream.seen.at(-1)!.url, 'http://x').search.slice(1);
}

describe('query injection named k', () => {
  it.each([
    ['?k=X', ''],
    ['?k=X&k=Y', ''],
    ['?a=1&k=X&b=2', 'a=1&b=2'],
    ['?K=X&a=1', 'a=1'],
    ['?%6B=X&a=1', 'a=1'],
    ['?%6b=X', ''],
    ['?k', ''],
    ['?k=', ''],
    ['?a=1;k=X&b=2', 'a=1&b=2'],
    ['?kk=1&ak=2&k2=3', 'kk=1&ak=2&k2=3'],
    ['?a=k%3DX', 'a=k%3DX'],
  ])('%s reaches the upstream as the consumer sent it minus every k, then k=<secret> once', async (query, kept) => {
    const search = await callQuery(query);
    const secret = `k=${encodeURIComponent(SECRET)}`;
    expect(search).toBe(kept ? `${kept}&${secret}` : secret);
    const params = new URLSearchParams(search);
    expect(params.getAll('k')).toEqual([SECRET]);
  });
});

describe('header injection named X-Api-Key', () => {
  it("replaces the consumer's own X-Api-Key (any case): the upstream sees only the secret", async () => {
    const c = await seedOrg(h.h);
    await grantCredits(h.h, c.orgId, 100);
    const r = await gw(hg.url, 'GET', `/${h.slug}/users/1`, { key: c.key, headers: { 'x-API-key': 'mine' } });
    expect(r.status).toBe(200);
    expect(h.upstream.seen.at(-1)!.headers['x-api-key']).toBe(SECRET);
  });
});
