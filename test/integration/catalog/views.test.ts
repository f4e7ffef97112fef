import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import {
  createLiveListing,
  fixture,
  startStubUpstream,
  type LiveListing,
  type StubUpstream,
} from '../../helpers/catalog.js';
import type { DbHandles } from '../../../core/db/database.js';
import { newId } from '../../../core/ids.js';
import type { z } from 'zod';
import { isDeepStrictEqual } from 'node:util';
import {
  CatalogSearchResultSchema,
  CategoryListSchema,
  ConsumerOpenApiSchema,
  LeaderboardSchema,
  ListingDetailSchema,
  ListingEndpointsSchema,
  ListingHistorySchema,
  ListingRanksSchema,
  ListingSchemaViewSchema,
  ListingStatsSchema,
} from '../../../core/schemas/catalog.schemas.js';
import {
  ProviderAnalyticsSchema,
  ProviderApiDetailSchema,
  ProviderApiListSchema,
  ProviderDirectorySchema,
  ProviderPageSchema,
  ProviderProfileSchema,
} from '../../../core/schemas/providers.schemas.js';
import { ActivityFeedSchema, MarketOverviewSchema } from '../../../core/schemas/market.schemas.js';
import { ListingTermsSchema, TermsDocumentListSchema } from '../../../core/schemas/terms.schemas.js';
import { UsageSummarySchema } from '../../../core/schemas/usage.schemas.js';
import { MeSchema } from '../../../core/schemas/identity.schemas.js';
import { insertUsageCalls, type UsageCallInput } from '../../../core/db/id-nums.js';

let h: ControlHarness;
let db: DbHandles;
let up: StubUpstream;
let prov: SeededOrg;
let consumer: SeededOrg;
let l: LiveListing;

beforeAll(async () => {
  up = await startStubUpstream();
  h = await startControl();
  db = openTestDb(h.dataDir);
  prov = await seedOrg(db);
  consumer = await seedOrg(db);
  l = await createLiveListing(h.control.url, prov.key, {
    baseUrl: up.url,
    openapiBody: fixture('petstore-expanded-v3.json'),
    slug: 'petstore',
    category: 'pets',
    prices: { 'GET /pets': 3, 'POST /pets': 10 },
  });
  const rows: UsageCallInput[] = [];
  const now = Date.now();
  for (let i = 1; i <= 100; i++) {
    rows.push({
      request_id: newId('req'),
      org_id: consumer.orgId,
      key_id: consumer.keyId,
      api_id: l.apiId,
      endpoint_id: l.endpoints['GET /pets']!,
      provider_org_id: prov.orgId,
      method: 'GET',
      status: i <= 90 ? 200 : 502,
      latency_ms: i,
      price_cents: 3,
      charged_cents: i <= 90 ? 3 : 0,
      error_code: i <= 90 ? null : 'upstream_error',
      created_at: now - i * 60_000 - (i > 50 ? 10 * 86_400_000 : 0),
    });
  }
  await insertUsageCalls(db.db, rows);
  await db.db
    .insertInto('provider_earnings')
    .values([
      {
        id: newId('txn'),
        provider_org_id: prov.orgId,
        api_id: l.apiId,
        kind: 'earning',
        gross_cents: 270,
        fee_cents: 54,
        net_cents: 216,
        ref_id: null,
        idempotency_key: newId('txn'),
        created_at: now - 1000,
      },
      {
        id: newId('txn'),
        provider_org_id: prov.orgId,
        api_id: l.apiId,
        kind: 'reversal',
        gross_cents: -3,
        fee_cents: -1,
        net_cents: -2,
        ref_id: null,
        idempotency_key: newId('txn'),
        created_at: now - 500,
      },
    ])
    .execute();
});
afterAll(async () => {
  await db.close();
  await h.stop();
  await up.close();
});

describe('listing views', () => {
  it('detail, endpoints and schema show prices and a pending increase', async () => {
    await call(h.control.url, 'PUT', `/v1/provider/apis/${l.apiId}/pricing`, {
      token: prov.key,
      body: { endpoints: [{ endpoint_id: l.endpoints['GET /pets']!, price_cents: 5 }] },
    });
    const d = await call(h.control.url, 'GET', '/v1/apis/petstore');
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({
      slug: 'petstore',
      name: 'Swagger Petstore',
      category: 'pets',
      endpoint_count: 4,
      free_endpoints: 2,
      min_price_cents: 0,
      max_price_cents: 10,
      pending_price_changes: 1,
    });
    expect(JSON.stringify(d.body)).not.toMatch(/secret|base_url/);
    const s = await call(h.control.url, 'GET', '/v1/apis/petstore/schema', { token: consumer.key });
    const pets = s.body.endpoints.find(
      (e: { method: string; path: string }) => e.method === 'GET' && e.path === '/pets',
    );
    expect(pets.price_cents).toBe(3);
    expect(pets.pending_price).toMatchObject({ new_price_cents: 5 });
    expect(pets.parameters.map((p: { name: string }) => p.name)).toEqual(['tags', 'limit']);
    expect(pets.response.schema.items.allOf).toBeDefined();
    const e = await call(h.control.url, 'GET', '/v1/apis/petstore/endpoints');
    expect(e.body.endpoints).toHaveLength(4);
    const o = await call(h.control.url, 'GET', '/v1/apis/petstore/openapi');
    expect(o.body.openapi).toBe('3.0.0');
  });

  it("the published OpenAPI names the gateway address, never the provider's upstream origin", async () => {
    const o = await call(h.control.url, 'GET', '/v1/apis/petstore/openapi');
    expect(o.body.servers).toEqual([{ url: expect.stringMatching(/\/petstore$/), description: 'svc gateway' }]);
    expect(JSON.stringify(o.body)).not.toContain('petstore.swagger.io');
    expect(JSON.stringify(o.body)).not.toContain(up.url);
  });

  it('history lists price changes newest first', async () => {
    const r = await call(h.control.url, 'GET', '/v1/apis/petstore/history?limit=10');
    expect(r.status).toBe(200);
    expect(r.body.data[0]).toMatchObject({ status: 'pending', old_price_cents: 3, new_price_cents: 5 });
    expect(r.body.data.filter((x: { status: string }) => x.status === 'applied')).toHaveLength(2);
  });

  it('stats give calls, success rate and p50/p95 latency over 7 and 30 days', async () => {
    const r = await call(h.control.url, 'GET', '/v1/apis/petstore/stats');
    expect(r.body.last_7d).toMatchObject({ calls: 50, success_rate: 1, p50_latency_ms: 25, p95_latency_ms: 47 });
    expect(r.body.last_30d).toMatchObject({
      calls: 100,
      success_rate: 0.9,
      distinct_orgs: 1,
      p50_latency_ms: 50,
      p95_latency_ms: 95,
    });
  });

  it('a draft is visible to its owner only', async () => {
    await call(h.control.url, 'POST', `/v1/provider/apis/${l.apiId}/unpublish`, { token: prov.key });
    expect((await call(h.control.url, 'GET', '/v1/apis/petstore')).body.code).toBe('listing_not_found');
    expect((await call(h.control.url, 'GET', '/v1/apis/petstore', { token: consumer.key })).status).toBe(404);
    expect((await call(h.control.url, 'GET', '/v1/apis/petstore', { token: prov.key })).body.status).toBe('draft');
    await call(h.control.url, 'POST', `/v1/provider/apis/${l.apiId}/publish`, {
      token: prov.key,
      body: { accept_terms: true, skip_verify: true },
    });
  });
});

describe('provider analytics, profile, directory, activity, catalog requests', () => {
  it('analytics report calls, gross, fee, net and per-endpoint numbers', async () => {
    const r = await call(h.control.url, 'GET', '/v1/provider/analytics', { token: prov.key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ calls: 100, ok_calls: 90, gross_volume_cents: 270, distinct_consumers: 1 });
    expect(r.body.earnings).toMatchObject({
      gross_cents: 267,
      platform_fee_cents: 53,
      net_cents: 214,
      reversals_cents: -2,
    });
    expect(r.body.listings[0]).toMatchObject({ slug: 'petstore', calls: 100, gross_cents: 270, net_cents: 214 });
    expect(r.body.listings[0].endpoints[0]).toMatchObject({ method: 'GET', path: '/pets', calls: 100 });
    const none = await call(h.control.url, 'GET', '/v1/provider/analytics', { token: consumer.key });
    expect(none.body.calls).toBe(0);
    const bad = await call(
      h.control.url,
      'GET',
      '/v1/provider/analytics?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z',
      { token: prov.key },
    );
    expect(bad.status).toBe(400);
  });

  it('profile get/update, public directory and profile by slug', async () => {
    const p = await call(h.control.url, 'PATCH', '/v1/provider/profile', {
      token: prov.key,
      body: { slug: 'pet-people', display_name: 'Pet People', bio: 'We list pets', website: 'https://pets.example' },
    });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ slug: 'pet-people', display_name: 'Pet People' });
    expect((await call(h.control.url, 'GET', '/v1/provider/profile', { token: prov.key })).body.bio).toBe(
      'We list pets',
    );
    expect((await call(h.control.url, 'GET', '/v1/provider/profile', { token: consumer.key })).status).toBe(404);
    const taken = await call(h.control.url, 'PATCH', '/v1/provider/profile', {
      token: consumer.key,
      body: { slug: 'pet-people' },
    });
    expect(taken.status).toBe(409);
    const dir = await call(h.control.url, 'GET', '/v1/providers?query=pet&limit=5');
    expect(dir.body.data[0]).toMatchObject({ slug: 'pet-people', live_listings: 1 });
    expect((await call(h.control.url, 'GET', '/v1/providers?limit=500')).status).toBe(400);
    const one = await call(h.control.url, 'GET', '/v1/providers/pet-people');
    expect(one.body.listings.map((x: { slug: string }) => x.slug)).toEqual(['petstore']);
    expect((await call(h.control.url, 'GET', '/v1/providers/nobody')).status).toBe(404);
  });

  it('activity feed shows publishes, price changes and new providers, newest first', async () => {
    const r = await call(h.control.url, 'GET', '/v1/market/activity?limit=50');
    const kinds = r.body.data.map((a: { kind: string }) => a.kind);
    expect(kinds).toEqual(expect.arrayContaining(['publish', 'unpublish', 'new_provider']));
    const times = r.body.data.map((a: { created_at: string }) => Date.parse(a.created_at));
    expect(times).toEqual([...times].sort((a: number, b: number) => b - a));
    expect((await call(h.control.url, 'GET', '/v1/market/activity?limit=1')).body).toMatchObject({
      limit: 1,
      has_more: true,
    });
  });

  it('catalog requests are recorded with or without a credential', async () => {
    const a = await call(h.control.url, 'POST', '/v1/catalog/requests', {
      body: { query: 'satellite imagery', email: 'me@example.com', notes: 'daily tiles' },
    });
    expect(a.status).toBe(201);
    expect(a.body.catalog_request_id).toMatch(/^creq_/);
    expect(a.body.request_id).toBeUndefined();
    const b = await call(h.control.url, 'POST', '/v1/catalog/requests', {
      token: consumer.key,
      body: { query: 'tide tables' },
    });
    expect(b.status).toBe(201);
    const rows = await db.db.selectFrom('catalog_requests').selectAll().orderBy('created_at').execute();
    expect(rows.map((r) => [r.query, r.org_id])).toEqual([
      ['satellite imagery', null],
      ['tide tables', consumer.orgId],
    ]);
    expect(
      (await call(h.control.url, 'POST', '/v1/catalog/requests', { body: { query: 'x', email: 'nope' } })).status,
    ).toBe(400);
  });
});

describe('every view answers with exactly the shape its schema declares', () => {
  it('catalog, provider, market, usage, terms and /v1/me bodies parse unchanged with their core/schemas', async () => {
    const checks: [string, string, z.ZodType][] = [
      ['', '/v1/catalog/search?query=pet', CatalogSearchResultSchema],
      ['', '/v1/catalog/categories', CategoryListSchema],
      ['', '/v1/apis/petstore', ListingDetailSchema],
      ['', '/v1/apis/petstore/schema', ListingSchemaViewSchema],
      ['', '/v1/apis/petstore/endpoints', ListingEndpointsSchema],
      ['', '/v1/apis/petstore/stats', ListingStatsSchema],
      ['', '/v1/apis/petstore/history', ListingHistorySchema],
      ['', '/v1/apis/petstore/ranks', ListingRanksSchema],
      ['', '/v1/apis/petstore/openapi', ConsumerOpenApiSchema],
      ['', '/v1/leaderboards/most_used', LeaderboardSchema],
      ['', '/v1/market/overview', MarketOverviewSchema],
      ['', '/v1/market/activity', ActivityFeedSchema],
      ['', '/v1/providers', ProviderDirectorySchema],
      ['', '/v1/providers/pet-people', ProviderPageSchema],
      [prov.key, '/v1/provider/profile', ProviderProfileSchema],
      [prov.key, '/v1/provider/analytics', ProviderAnalyticsSchema],
      [prov.key, '/v1/provider/apis', ProviderApiListSchema],
      [prov.key, `/v1/provider/apis/${l.apiId}`, ProviderApiDetailSchema],
      [prov.key, '/v1/provider/documents', TermsDocumentListSchema],
      [consumer.key, '/v1/apis/petstore/terms', ListingTermsSchema],
      [consumer.key, '/v1/usage', UsageSummarySchema],
      [consumer.key, '/v1/me', MeSchema],
    ];
    const wrong: string[] = [];
    for (const [token, path, schema] of checks) {
      const r = await call(h.control.url, 'GET', path, token ? { token } : {});
      expect(r.status, path).toBe(200);
      const parsed = schema.safeParse(r.body);
      // Parsing strips keys the schema does not name, so equality also catches a field the schema forgot.
      if (!parsed.success) wrong.push(`${path}: ${parsed.error.message}`);
      else if (!isDeepStrictEqual(parsed.data, r.body)) wrong.push(`${path}: undeclared fields`);
    }
    expect(wrong).toEqual([]);
  });
});
