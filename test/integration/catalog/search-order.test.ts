/**
 * Search over `listing_search` (migration 0010) returns exactly what the query before it returned: the same ids in
 * the same order and the same total, for every sort, filter and page, over data full of ties (equal names, prices,
 * stats and publish times), drafts, suspended listings and a live listing whose endpoints were all removed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openMigratedTempDb, seedOrg } from '../../helpers/db.js';
import { insertListing } from '../../helpers/catalog.js';
import { ftsQuery, searchListingIds, type SearchParams } from '../../../control/catalog/search.service.js';
import { normalizeCategory } from '../../../control/catalog/category.js';
import { attachSearchIndex, searchIndexOf } from '../../../control/catalog/search-index.owner.js';
import { SORTS, type Sort } from '../../../core/enumerations.js';
import type { Db } from '../../../core/db/database.js';
import { createLogger } from '../../../core/log.js';

const silent = createLogger('test', 'silent');

let tmp: Awaited<ReturnType<typeof openMigratedTempDb>>;
let db: Db;

beforeAll(async () => {
  tmp = await openMigratedTempDb();
  db = tmp.h.db;
  const org = await seedOrg(tmp.h);
  const words = ['weather', 'maps', 'stocks'];
  const cats = ['finance', 'maps', 'weather'];
  const t0 = Date.now();
  for (let i = 0; i < 120; i++) {
    const w = words[i % 3]!;
    const { apiId, endpointIds } = await insertListing(tmp.h, {
      orgId: org.orgId,
      slug: `tie-${i}`,
      // every fourth listing has the same text as another: equal bm25
      name: i % 4 === 0 ? `${w} twin` : `${w} api ${i}`,
      summary: i % 5 === 0 ? `${words[(i + 1) % 3]} extras` : '',
      category: cats[i % 3 === 0 ? 0 : (i >> 2) % 3]!,
      status: i % 17 === 5 ? 'draft' : 'live',
      suspended: i % 19 === 7,
      endpoints: [
        { method: 'GET', path: `/${w}`, priceCents: (i % 4) * 5 },
        { method: 'POST', path: `/${w}/x`, priceCents: 7 },
      ],
      // publish times repeat, so the id is the last tie-break
      publishedAt: t0 - (i % 10) * 1000,
    });
    if (i % 23 === 11)
      await db.updateTable('endpoints').set({ removed_at: t0 }).where('id', 'in', endpointIds).execute();
    if (i % 3 !== 2) {
      const calls = (i % 6) * 4;
      await db
        .insertInto('api_stats')
        .values({
          api_id: apiId,
          calls_30d: calls,
          success_30d: calls - (i % 2),
          orgs_30d: i % 4,
          gross_30d_cents: 0,
          computed_at: t0,
        })
        .execute();
    }
  }
});
afterAll(() => tmp.close());

/** The search query before migration 0010, verbatim: the oracle. */
async function before(p: SearchParams): Promise<{ ids: string[]; total: number }> {
  const match = p.query ? ftsQuery(p.query) : null;
  if (p.query && !match) return { ids: [], total: 0 };
  const sort: Sort = p.sort ?? 'relevance';
  const conds = [sql`a.status = 'live'`, sql`a.suspended_at IS NULL`];
  if (match) conds.push(sql`apis_fts MATCH ${match}`);
  if (p.category) conds.push(sql`a.category = ${normalizeCategory(p.category)}`);
  if (p.max_price_cents !== undefined) conds.push(sql`mp.min_price <= ${p.max_price_cents}`);
  const where = sql.join(conds, sql` AND `);
  const from = match ? sql`apis_fts JOIN apis a ON a.rowid = apis_fts.rowid` : sql`apis a`;
  const relevance = match ? sql`bm25(apis_fts, 10.0, 5.0, 1.0, 4.0, 2.0)` : sql`a.published_at * -1`;
  const successRate = sql`CASE WHEN coalesce(s.calls_30d, 0) >= 10 THEN CAST(s.success_30d AS REAL) / s.calls_30d ELSE -1 END`;
  const order =
    sort === 'price'
      ? sql`mp.min_price ASC, ${relevance} ASC, a.published_at DESC`
      : sort === 'popularity'
        ? sql`coalesce(s.orgs_30d, 0) DESC, coalesce(s.calls_30d, 0) DESC, ${relevance} ASC`
        : sort === 'reliability'
          ? sql`${successRate} DESC, coalesce(s.calls_30d, 0) DESC, ${relevance} ASC`
          : sort === 'newest'
            ? sql`a.published_at DESC`
            : match
              ? sql`${relevance} ASC, coalesce(s.orgs_30d, 0) DESC, a.published_at DESC`
              : sql`coalesce(s.orgs_30d, 0) DESC, coalesce(s.calls_30d, 0) DESC, a.published_at DESC`;
  const base = sql`FROM ${from}
    JOIN (SELECT api_id, min(price_cents) AS min_price FROM endpoints WHERE removed_at IS NULL GROUP BY api_id) mp ON mp.api_id = a.id
    LEFT JOIN api_stats s ON s.api_id = a.id
    WHERE ${where}`;
  const rows = (
    await sql<{
      id: string;
    }>`SELECT a.id ${base} ORDER BY ${order}, a.id LIMIT ${p.limit + 1} OFFSET ${p.offset}`.execute(db)
  ).rows;
  const total = (await sql<{ n: number }>`SELECT count(*) AS n ${base}`.execute(db)).rows[0]?.n ?? 0;
  return { ids: rows.map((r) => r.id), total: Number(total) };
}

const QUERIES = [undefined, 'weather', 'maps twin', 'stock', 'api extras', '!!'];
const FILTERS: Pick<SearchParams, 'category' | 'max_price_cents'>[] = [
  {},
  { category: 'Finance' },
  { max_price_cents: 0 },
  { max_price_cents: 5 },
  { category: 'maps', max_price_cents: 10 },
  { category: 'nothing-here' },
];
const PAGES = [
  { limit: 20, offset: 0 },
  { limit: 7, offset: 7 },
  { limit: 100, offset: 0 },
  { limit: 5, offset: 95 },
  // pages read from the cached rank windows (RANK_WINDOW = 100): the end of the first, the start of the second
  { limit: 100, offset: 99 },
  { limit: 3, offset: 101 },
];

/** Every query × sort × filter × page through searchListingIds equals the oracle. */
async function expectSameAsBefore(): Promise<void> {
  let compared = 0;
  let nonEmpty = 0;
  for (const query of QUERIES)
    for (const sort of [undefined, ...SORTS])
      for (const f of FILTERS)
        for (const page of PAGES) {
          const p: SearchParams = { query, sort, ...f, ...page };
          const got = await searchListingIds(db, p);
          expect(got, JSON.stringify(p)).toEqual(await before(p));
          compared++;
          if (got.ids.length > 1) nonEmpty++;
        }
  expect(compared).toBe(QUERIES.length * (SORTS.length + 1) * FILTERS.length * PAGES.length);
  expect(nonEmpty).toBeGreaterThan(compared / 3);
}

describe('search over listing_search', () => {
  it('returns the same ids, order and total as the query before it, for every sort, filter and page', async () => {
    await expectSameAsBefore();
  });

  it('returns the same through the in-memory index (control/catalog/search-index.ts)', async () => {
    const detach = attachSearchIndex(db, tmp.h.sqlite, silent);
    try {
      // a new version, so no answer cached by the FTS5 run above is reused
      await sql`UPDATE search_version SET n = n + 1`.execute(db);
      expect(searchIndexOf(db)).toBeDefined();
      await expectSameAsBefore();
    } finally {
      detach();
    }
  });

  it('pages are stable: consecutive pages of every sort partition the full result without overlap', async () => {
    for (const sort of SORTS) {
      const all = (await searchListingIds(db, { sort, limit: 100, offset: 0 })).ids.slice(0, 100);
      const paged: string[] = [];
      for (let offset = 0; offset < all.length; offset += 9)
        paged.push(...(await searchListingIds(db, { sort, limit: 9, offset })).ids.slice(0, 9));
      expect(paged.slice(0, all.length), sort).toEqual(all);
      expect(new Set(paged).size).toBe(paged.length);
    }
  });

  it('leaves out a live listing whose endpoints were all removed, and drafts and suspended listings', async () => {
    const { ids, total } = await searchListingIds(db, { limit: 100, offset: 0 });
    const hidden = await db
      .selectFrom('apis')
      .select('id')
      .where((eb) =>
        eb.or([
          eb('status', '=', 'draft'),
          eb('suspended_at', 'is not', null),
          eb.not(
            eb.exists(
              eb
                .selectFrom('endpoints')
                .select('endpoints.id')
                .whereRef('endpoints.api_id', '=', 'apis.id')
                .where('endpoints.removed_at', 'is', null),
            ),
          ),
        ]),
      )
      .execute();
    expect(hidden.length).toBeGreaterThan(10);
    expect(total).toBe(120 - hidden.length);
    for (const { id } of hidden) expect(ids).not.toContain(id);
  });
});
