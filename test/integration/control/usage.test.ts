import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedKey, seedListing, seedOrg } from '../../helpers/db.js';
import { runAuthSuite } from '../../helpers/auth-suite.js';
import { newId } from '../../../core/ids.js';
import { insertUsageCalls } from '../../../core/db/id-nums.js';

let h: ControlHarness;
let consumer: Awaited<ReturnType<typeof seedOrg>>;
let otherKeyId: string;
const T0 = Date.UTC(2026, 9, 1, 12);

beforeAll(async () => {
  h = await startControl();
  const db = openTestDb(h.dataDir);
  const provider = await seedOrg(db);
  consumer = await seedOrg(db);
  otherKeyId = (await seedKey(db, consumer.orgId, { scopes: ['proxy:call'] })).keyId;
  const { apiId, endpointIds } = await seedListing(db, {
    orgId: provider.orgId,
    slug: 'usage-api',
    baseUrl: 'http://127.0.0.1:9',
    endpoints: [{ method: 'GET', path: '/a', priceCents: 3 }],
  });
  const row = (i: number, keyId: string, status: number, charged: number) => ({
    request_id: newId('req', T0 + i),
    org_id: consumer.orgId,
    key_id: keyId,
    api_id: apiId,
    endpoint_id: endpointIds[0]!,
    provider_org_id: provider.orgId,
    method: 'GET',
    status,
    latency_ms: 10,
    price_cents: 3,
    charged_cents: charged,
    error_code: status >= 500 ? 'upstream_error' : null,
    created_at: T0 + i * 3600_000,
  });
  await insertUsageCalls(db.db, [
    row(0, consumer.keyId, 200, 3),
    row(1, consumer.keyId, 200, 3),
    row(2, otherKeyId, 502, 0),
    row(30, consumer.keyId, 200, 3),
  ]);
  await db.close();
});
afterAll(() => h.stop());

describe('GET /v1/usage', () => {
  it('sums calls and charges over the range, per key and per UTC day', async () => {
    const res = await call(h.control.url, 'GET', '/v1/usage?from=2026-10-01&to=2026-10-02', { token: consumer.key });
    expect(res.status).toBe(200);
    expect(res.body.totals).toEqual({ calls: 3, charged_cents: 6, failed_calls: 1 });
    expect(res.body.by_api).toEqual([{ api_id: expect.any(String), slug: 'usage-api', calls: 3, charged_cents: 6 }]);
    expect(res.body.by_key).toEqual(
      expect.arrayContaining([
        { key_id: consumer.keyId, calls: 2, charged_cents: 6 },
        { key_id: otherKeyId, calls: 1, charged_cents: 0 },
      ]),
    );
    expect(res.body.by_day).toEqual([{ day: '2026-10-01', calls: 3, charged_cents: 6 }]);
    expect(res.body.events.data[0]).toMatchObject({ slug: 'usage-api', path: '/a', status: 502, charged_cents: 0 });
  });

  it('paginates events and filters by key', async () => {
    const res = await call(
      h.control.url,
      'GET',
      `/v1/usage?from=2026-10-01&to=2026-10-03&limit=1&key_id=${consumer.keyId}`,
      { token: consumer.key },
    );
    expect(res.body.totals.calls).toBe(3);
    expect(res.body.events.data).toHaveLength(1);
    expect(res.body.events.has_more).toBe(true);
  });

  it("does not show another org's usage", async () => {
    const reg = (await call(h.control.url, 'POST', '/v1/register')).body;
    const res = await call(h.control.url, 'GET', '/v1/usage?from=2026-10-01&to=2026-10-03', { token: reg.api_key });
    expect(res.body.totals).toEqual({ calls: 0, charged_cents: 0, failed_calls: 0 });
  });

  it.each([
    ['from=2026-10-05&to=2026-10-01', 'from'],
    ['from=yesterday', 'from'],
    ['from=2020-01-01&to=2026-01-01', 'from'],
    ['limit=1000', 'limit'],
    ['offset=-1', 'offset'],
  ])('refuses %s', async (qs, field) => {
    const res = await call(h.control.url, 'GET', `/v1/usage?${qs}`, { token: consumer.key });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
  });
});

runAuthSuite('usage', () => h, [{ method: 'GET', path: '/v1/usage', scope: 'usage:read' }]);
