import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { insertListing } from '../../helpers/catalog.js';
import type { DbHandles } from '../../../core/db/database.js';
import { pgTestMode } from '../../helpers/postgres.js';

/**
 * Runs on both stores (vitest.pg.config.ts). Two assertions are FTS5's alone and skipped in the PostgreSQL pass:
 * SQLite's index holds endpoint paths, PostgreSQL's document does not (control/catalog/search.pg.ts,
 * docs/scale-out.md "Search"). Every other ranking, filter, sort and paging assertion is the same on both.
 */
const FTS5_ONLY = pgTestMode();

let h: ControlHarness;
let db: DbHandles;
let prov: SeededOrg;
const CATS = ['finance', 'maps', 'text', 'images', 'sports'];
const WORDS = [
  'rates',
  'quotes',
  'geocode',
  'routes',
  'translate',
  'summarize',
  'resize',
  'thumbnail',
  'scores',
  'fixtures',
];

beforeAll(async () => {
  h = await startControl();
  db = openTestDb(h.dataDir);
  prov = await seedOrg(db);
  const now = Date.now();
  // 300 generated listings that never mention weather
  for (let i = 0; i < 300; i++) {
    const cat = CATS[i % CATS.length]!;
    const w = WORDS[i % WORDS.length]!;
    await insertListing(db, {
      orgId: prov.orgId,
      slug: `gen-${i}`,
      name: `Acme ${cat} ${w} ${i}`,
      summary: `${w} for ${cat}`,
      description: `Generated listing number ${i}.`,
      category: cat,
      tags: [cat, w],
      endpoints: [{ method: 'GET', path: `/${w}`, priceCents: (i % 7) * 5 }],
      publishedAt: now - i * 1000,
    });
  }
  await insertListing(db, {
    orgId: prov.orgId,
    slug: 'weather-in-name',
    name: 'Global Weather',
    summary: 'Forecasts for every city',
    category: 'weather',
    tags: ['forecast'],
    endpoints: [{ method: 'GET', path: '/forecast', priceCents: 20 }],
    publishedAt: now - 500_000,
  });
  await insertListing(db, {
    orgId: prov.orgId,
    slug: 'weather-in-description',
    name: 'Sky Data',
    summary: 'Atmosphere numbers',
    description: 'Includes some weather observations.',
    category: 'science',
    endpoints: [{ method: 'GET', path: '/obs', priceCents: 1 }],
    publishedAt: now - 400_000,
  });
  await insertListing(db, {
    orgId: prov.orgId,
    slug: 'weather-in-path',
    name: 'Station Feed',
    summary: 'Raw station feed',
    category: 'science',
    endpoints: [{ method: 'GET', path: '/weather/today', priceCents: 0 }],
    publishedAt: now - 300_000,
  });
  await insertListing(db, {
    orgId: prov.orgId,
    slug: 'weather-draft',
    name: 'Weather Draft',
    summary: 'weather weather',
    category: 'weather',
    status: 'draft',
    endpoints: [{ method: 'GET', path: '/x', priceCents: 0 }],
  });
  await insertListing(db, {
    orgId: prov.orgId,
    slug: 'weather-suspended',
    name: 'Weather Suspended',
    summary: 'weather',
    category: 'weather',
    suspended: true,
    endpoints: [{ method: 'GET', path: '/x', priceCents: 0 }],
  });
});
afterAll(async () => {
  await db.close();
  await h.stop();
});

const search = (qs: string, token?: string) => call(h.control.url, 'GET', `/v1/catalog/search?${qs}`, { token });

describe('catalog search', () => {
  it('ranks a name match above a description match, and hides drafts and suspended listings', async () => {
    const r = await search('query=weather');
    expect(r.status).toBe(200);
    const slugs = r.body.data.map((d: { slug: string }) => d.slug);
    expect(slugs[0]).toBe('weather-in-name');
    expect(slugs).toContain('weather-in-description');
    expect(slugs).not.toContain('weather-draft');
    expect(slugs).not.toContain('weather-suspended');
    expect(r.body.total).toBe(slugs.length);
  });

  it.skipIf(FTS5_ONLY)('matches endpoint paths too, below the name match (FTS5 only)', async () => {
    const r = await search('query=weather');
    const slugs = r.body.data.map((d: { slug: string }) => d.slug);
    expect(slugs[0]).toBe('weather-in-name');
    expect(new Set(slugs)).toEqual(new Set(['weather-in-name', 'weather-in-description', 'weather-in-path']));
    expect(r.body.total).toBe(3);
  });

  it('matches word prefixes and tags; a query with only punctuation matches nothing', async () => {
    const r = await search('query=geoc');
    expect(r.body.total).toBe(30);
    const t = await search('query=thumbnail&limit=100');
    expect(t.body.data.every((d: { tags: string[] }) => d.tags.includes('thumbnail'))).toBe(true);
    const p = await search(`query=${encodeURIComponent('"*) OR (')}`);
    expect(p.status).toBe(200);
    expect(p.body.total).toBe(0);
  });

  it('normalises the category filter as the docs say (FINANCE, " Finance " = finance)', async () => {
    const exact = (await search('category=finance&limit=1')).body.total;
    expect(exact).toBe(60);
    expect((await search('category=FINANCE&limit=1')).body.total).toBe(exact);
    expect((await search(`category=${encodeURIComponent(' Finance ')}&limit=1`)).body.total).toBe(exact);
  });

  it('filters by category and max_price_cents (cheapest endpoint)', async () => {
    const r = await search('category=finance&max_price_cents=10&limit=100');
    expect(r.body.data.length).toBeGreaterThan(0);
    for (const d of r.body.data) {
      expect(d.category).toBe('finance');
      expect(d.min_price_cents).toBeLessThanOrEqual(10);
    }
    const all = await search('category=finance&limit=100');
    expect(all.body.total).toBe(60);
    expect(r.body.total).toBeLessThan(60);
  });

  it('sorts by price and newest', async () => {
    const p = await search('category=maps&sort=price&limit=100');
    const prices = p.body.data.map((d: { min_price_cents: number }) => d.min_price_cents);
    expect(prices).toEqual([...prices].sort((a: number, b: number) => a - b));
    const n = await search('sort=newest&limit=5');
    const times = n.body.data.map((d: { published_at: string }) => Date.parse(d.published_at));
    expect(times).toEqual([...times].sort((a: number, b: number) => b - a));
  });

  it('pages with limit/offset and refuses out-of-range values', async () => {
    const a = await search('category=text&limit=25&offset=0&sort=newest');
    const b = await search('category=text&limit=25&offset=25&sort=newest');
    expect(a.body).toMatchObject({ limit: 25, offset: 0, has_more: true, total: 60 });
    expect(b.body.has_more).toBe(true);
    const overlap = a.body.data.filter((x: { slug: string }) =>
      b.body.data.some((y: { slug: string }) => y.slug === x.slug),
    );
    expect(overlap).toHaveLength(0);
    for (const qs of ['limit=0', 'limit=101', 'offset=-1', 'offset=10001', 'sort=cheapest', 'max_price_cents=-5']) {
      const r = await search(qs);
      expect(r.status, qs).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
  });

  it('is public, but a sent credential must be valid and carry catalog:read', async () => {
    const noScope = await seedOrg(db, { scopes: ['proxy:call'] });
    expect((await search('query=weather', noScope.key)).status).toBe(403);
    expect((await search('query=weather', 'svc_live_' + 'x'.repeat(24))).status).toBe(401);
    expect((await search('query=weather', prov.key)).status).toBe(200);
  });

  it('discover returns compact results with endpoints; categories have counts', async () => {
    const d = await call(h.control.url, 'GET', '/v1/catalog/discover?query=weather&max_results=2');
    expect(d.status).toBe(200);
    expect(d.body.results).toHaveLength(2);
    expect(d.body.results[0]).toMatchObject({
      slug: 'weather-in-name',
      endpoints: [{ method: 'GET', path: '/forecast', price_cents: 20 }],
    });
    expect((await call(h.control.url, 'GET', '/v1/catalog/discover?query=weather&max_results=51')).status).toBe(400);
    expect((await call(h.control.url, 'GET', '/v1/catalog/discover')).status).toBe(400);
    const c = await call(h.control.url, 'GET', '/v1/catalog/categories');
    expect(c.body.data).toEqual(
      expect.arrayContaining([
        { category: 'finance', count: 60 },
        { category: 'science', count: 2 },
        { category: 'weather', count: 1 },
      ]),
    );
  });

  it('keeps the index in sync when a listing is renamed', async () => {
    await db.db.updateTable('apis').set({ name: 'Zebra Stripes Counter' }).where('slug', '=', 'gen-7').execute();
    expect((await search('query=zebra')).body.data.map((d: { slug: string }) => d.slug)).toEqual(['gen-7']);
  });

  it.skipIf(FTS5_ONLY)('keeps the index in sync when endpoints change (FTS5 only: paths are indexed)', async () => {
    const api = await db.db.selectFrom('apis').select('id').where('slug', '=', 'gen-8').executeTakeFirstOrThrow();
    await db.db.updateTable('endpoints').set({ path: '/quokka' }).where('api_id', '=', api.id).execute();
    expect((await search('query=quokka')).body.data.map((d: { slug: string }) => d.slug)).toEqual(['gen-8']);
  });
});
