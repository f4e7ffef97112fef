/**
 * `listing_search` (migration 0010) is a cache of what search filters and sorts on. After every write path that
 * changes a listing's visibility, category, prices or stats, the whole table must equal a recomputation from the
 * source tables, so a path whose trigger is missing fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { startControl, type ControlHarness } from '../../helpers/harness.js';
import { call } from '../../helpers/http.js';
import { chargeLikeGateway, grantCredits, openTestDb, seedOrg, type SeededOrg } from '../../helpers/db.js';
import { createLiveListing, smallOpenApi, startStubUpstream, type StubUpstream } from '../../helpers/catalog.js';
import { ROOT } from '../../helpers/processes.js';
import { refreshLeaderboards } from '../../../control/market/leaderboards.service.js';
import type { DbHandles } from '../../../core/db/database.js';
import { waitFor } from '../../helpers/wait.js';

const DAY = 86_400_000;
const run = promisify(execFile);
let h: ControlHarness;
let db: DbHandles;
let up: StubUpstream;
let prov: SeededOrg;
let consumer: SeededOrg;
let clockFile: string;

beforeAll(async () => {
  up = await startStubUpstream();
  clockFile = join(tmpdir(), `svc-clock-search-${process.pid}-${Date.now()}`);
  writeFileSync(clockFile, '0');
  h = await startControl({ SVC_CLOCK_OFFSET_FILE: clockFile, SVC_PRICE_NOTICE_DAYS: '7' });
  db = openTestDb(h.dataDir);
  prov = await seedOrg(db);
  consumer = await seedOrg(db);
});
afterAll(async () => {
  await db.close();
  await h.stop();
  await up.close();
});

interface SearchRow {
  api_id: string;
  category: string;
  published_at: number;
  min_price_cents: number;
  orgs_30d: number;
  calls_30d: number;
  reliability: number;
}

/** What the cache holds. */
const cached = async () =>
  (
    await sql<SearchRow>`SELECT api_id, category, published_at, min_price_cents, orgs_30d, calls_30d, reliability
      FROM listing_search ORDER BY api_id`.execute(db.db)
  ).rows;

/** The same rows recomputed from apis, endpoints and api_stats, written independently of the migration. */
const truth = async () =>
  (
    await sql<SearchRow>`SELECT a.id AS api_id, a.category, a.published_at,
        min(e.price_cents) AS min_price_cents, coalesce(s.orgs_30d, 0) AS orgs_30d,
        coalesce(s.calls_30d, 0) AS calls_30d,
        CASE WHEN coalesce(s.calls_30d, 0) >= 10 THEN CAST(s.success_30d AS REAL) / s.calls_30d ELSE -1 END AS reliability
      FROM apis a JOIN endpoints e ON e.api_id = a.id AND e.removed_at IS NULL
      LEFT JOIN api_stats s ON s.api_id = a.id
      WHERE a.status = 'live' AND a.suspended_at IS NULL
      GROUP BY a.id ORDER BY a.id`.execute(db.db)
  ).rows;

async function expectInSync(): Promise<SearchRow[]> {
  const rows = await cached();
  expect(rows).toEqual(await truth());
  return rows;
}

const rowOf = async (apiId: string) => (await expectInSync()).find((r) => r.api_id === apiId);
const foundUnder = async (name: string, maxPrice: number) =>
  (await call(h.control.url, 'GET', `/v1/catalog/search?query=${name}&max_price_cents=${maxPrice}`)).body.total;

async function admin(...args: string[]): Promise<void> {
  await run(process.execPath, [join(ROOT, 'dist/control/admin/main.js'), ...args, '--json'], { env: h.env });
}

describe('listing_search follows every write path', () => {
  it('publish, price set, increase taking effect, endpoint removed, category, stats, unpublish, suspend', async () => {
    const l = await createLiveListing(h.control.url, prov.key, {
      baseUrl: up.url,
      name: 'Quetzal Index',
      prices: { 'GET /ping': 10, 'GET /items/{id}': 30, 'POST /items': 50 },
    });
    // a draft beside it is never in the cache
    await call(h.control.url, 'POST', '/v1/provider/apis', {
      token: prov.key,
      body: { body: smallOpenApi('Quetzal Draft'), base_url: up.url },
    });
    expect(await rowOf(l.apiId)).toMatchObject({ min_price_cents: 10, category: expect.any(String) });
    expect(await cached()).toHaveLength(1);

    // a decrease applies at once
    const ping = l.endpoints['GET /ping']!;
    const dec = await call(h.control.url, 'PUT', `/v1/provider/apis/${l.apiId}/pricing`, {
      token: prov.key,
      body: { endpoints: [{ endpoint_id: ping, price_cents: 5 }] },
    });
    expect(dec.body.results[0].outcome).toBe('applied');
    expect(await rowOf(l.apiId)).toMatchObject({ min_price_cents: 5 });
    expect(await foundUnder('quetzal', 5)).toBe(1);

    // an increase waits for its notice, then the price job applies it
    const inc = await call(h.control.url, 'PUT', `/v1/provider/apis/${l.apiId}/pricing`, {
      token: prov.key,
      body: { endpoints: [{ endpoint_id: ping, price_cents: 40 }] },
    });
    expect(inc.body.results[0].outcome).toBe('scheduled');
    expect(await rowOf(l.apiId)).toMatchObject({ min_price_cents: 5 });
    writeFileSync(clockFile, String(8 * DAY));
    const applied = await waitFor(cached, (rows) => rows[0]?.min_price_cents === 30);
    expect(applied[0]).toMatchObject({ min_price_cents: 30 });
    writeFileSync(clockFile, '0');
    await expectInSync();
    expect(await foundUnder('quetzal', 5)).toBe(0);

    // a re-import without GET /items/{id} removes that endpoint: the cheapest is now the 40-cent ping
    const doc = smallOpenApi('Quetzal Index') as { paths: Record<string, unknown> };
    delete doc.paths['/items/{id}'];
    const re = await call(h.control.url, 'POST', `/v1/provider/apis/${l.apiId}/import`, {
      token: prov.key,
      body: { body: doc },
    });
    expect(re.status).toBe(200);
    expect(re.body.removed).toBe(1);
    expect(await rowOf(l.apiId)).toMatchObject({ min_price_cents: 40 });

    // a metadata PATCH moves it to another category
    const patch = await call(h.control.url, 'PATCH', `/v1/provider/apis/${l.apiId}`, {
      token: prov.key,
      body: { category: 'weather' },
    });
    expect(patch.status).toBe(200);
    expect(await rowOf(l.apiId)).toMatchObject({ category: 'weather' });

    // the stats refresh (the leaderboard job's body) brings popularity and reliability
    await grantCredits(db, consumer.orgId, 10_000);
    for (let i = 0; i < 12; i++)
      await chargeLikeGateway(db, consumer, 40, { apiId: l.apiId, providerOrgId: prov.orgId });
    await refreshLeaderboards(db.db, Date.now());
    expect(await rowOf(l.apiId)).toMatchObject({ orgs_30d: 1, calls_30d: 12, reliability: 1 });
    // the next refresh updates the stats row in place
    for (let i = 0; i < 3; i++)
      await chargeLikeGateway(db, consumer, 40, { apiId: l.apiId, providerOrgId: prov.orgId });
    await refreshLeaderboards(db.db, Date.now());
    expect(await rowOf(l.apiId)).toMatchObject({ orgs_30d: 1, calls_30d: 15 });
    // a refresh with nothing new writes nothing: the stats row keeps its computed_at, the search version stands
    const statsOf = () => db.db.selectFrom('api_stats').selectAll().where('api_id', '=', l.apiId).executeTakeFirst();
    const versionNow = async () => (await sql<{ n: number }>`SELECT n FROM search_version`.execute(db.db)).rows[0]?.n;
    const [statsBefore, versionBefore] = [await statsOf(), await versionNow()];
    await refreshLeaderboards(db.db, Date.now() + 1_000);
    expect(await statsOf()).toEqual(statsBefore);
    expect(await versionNow()).toBe(versionBefore);

    // unpublish takes it out; publishing again brings it back with its price and stats, even when a stats refresh
    // (the control process runs one every minute) came in between
    await call(h.control.url, 'POST', `/v1/provider/apis/${l.apiId}/unpublish`, { token: prov.key });
    expect(await rowOf(l.apiId)).toBeUndefined();
    expect(await foundUnder('quetzal', 100)).toBe(0);
    await refreshLeaderboards(db.db, Date.now() + 2_000);
    const pub = await call(h.control.url, 'POST', `/v1/provider/apis/${l.apiId}/publish`, {
      token: prov.key,
      body: { accept_terms: true, skip_verify: true },
    });
    expect(pub.status).toBe(200);
    expect(await rowOf(l.apiId)).toMatchObject({ min_price_cents: 40, orgs_30d: 1, calls_30d: 15 });

    // an operator's suspension takes it out until lifted
    await admin('suspend', 'listing', l.slug);
    expect(await rowOf(l.apiId)).toBeUndefined();
    await admin('unsuspend', 'listing', l.slug);
    expect(await rowOf(l.apiId)).toMatchObject({ min_price_cents: 40 });
    expect(await foundUnder('quetzal', 40)).toBe(1);
  });

  it('a repeated search (served from the per-process cache) sees a write made by another process at once', async () => {
    const names = async (q: string) =>
      (await call(h.control.url, 'GET', `/v1/catalog/search?query=${q}`)).body.data.map(
        (d: { name: string }) => d.name,
      );
    expect(await names('quetzal')).toEqual(['Quetzal Index']);
    expect(await names('quetzal')).toEqual(['Quetzal Index']);
    const cats = async () => (await call(h.control.url, 'GET', '/v1/catalog/categories')).body.data;
    expect(await cats()).toEqual([{ category: 'weather', count: 1 }]);
    // this test process is the other writer
    // text only (no column of listing_search changes), then the category
    await db.db
      .updateTable('apis')
      .set({ name: 'Ocelot Index', summary: 'Cats', description: 'Spotted cats.' })
      .where('name', '=', 'Quetzal Index')
      .execute();
    expect(await names('quetzal')).toEqual([]);
    expect(await names('ocelot')).toEqual(['Ocelot Index']);
    await db.db.updateTable('apis').set({ category: 'maps' }).where('name', '=', 'Ocelot Index').execute();
    expect(await cats()).toEqual([{ category: 'maps', count: 1 }]);
  });

  it('a cached answer shows a provider rename and a listing slug change at once (migration 0012)', async () => {
    const first = async () =>
      (await call(h.control.url, 'GET', '/v1/catalog/search?query=ocelot')).body.data[0] as {
        slug: string;
        provider: { slug: string; display_name: string };
      };
    const before = await first();
    expect(await first()).toEqual(before); // now served from the cache
    const renamed = await call(h.control.url, 'PATCH', '/v1/provider/profile', {
      token: prov.key,
      body: { display_name: 'Renamed Provider Co' },
    });
    expect(renamed.status).toBe(200);
    expect((await first()).provider.display_name).toBe('Renamed Provider Co');
    // another process renames the listing's slug (an operator's fix): the cached answer follows
    await db.db.updateTable('apis').set({ slug: 'ocelot-index-2' }).where('name', '=', 'Ocelot Index').execute();
    expect((await first()).slug).toBe('ocelot-index-2');
  });
});
