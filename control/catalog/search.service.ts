/**
 * Catalog search over live listings: SQLite FTS5 (bm25 weighted name > summary > tags > paths > description),
 * filters `category` and `max_price_cents` (cheapest endpoint), sorts documented in docs/catalog.md.
 */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { normalizeCategory } from './category.js';
import type { Sort } from '../../core/enumerations.js';
import type { CatalogSearchResult } from '../../core/schemas/catalog.schemas.js';
import { pageOf } from '../lib/pagination.js';
import { listingSummaries, toListingSummary } from './listing-summary.js';

export interface SearchParams {
  query?: string | undefined;
  category?: string | undefined;
  max_price_cents?: number | undefined;
  sort?: Sort | undefined;
  limit: number;
  offset: number;
}

/** Words of the query as quoted FTS5 prefix terms joined by OR: user text never reaches FTS5 syntax unescaped. */
export function ftsQuery(q: string): string | null {
  const words =
    q
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu)
      ?.slice(0, 12) ?? [];
  if (words.length === 0) return null;
  return words.map((w) => `"${w}"*`).join(' OR ');
}

/** Returns ordered api ids (limit + 1 for has_more) and the total number of matches. */
export async function searchListingIds(db: Db, p: SearchParams): Promise<{ ids: string[]; total: number }> {
  const match = p.query ? ftsQuery(p.query) : null;
  if (p.query && !match) return { ids: [], total: 0 };
  const sort: Sort = p.sort ?? 'relevance';
  const conds = [sql`a.status = 'live'`, sql`a.suspended_at IS NULL`];
  if (match) conds.push(sql`apis_fts MATCH ${match}`);
  // Stored categories are normalised (`Developer Tools` → `developer-tools`); so is the filter.
  if (p.category) conds.push(sql`a.category = ${normalizeCategory(p.category)}`);
  if (p.max_price_cents !== undefined) conds.push(sql`mp.min_price <= ${p.max_price_cents}`);
  const where = sql.join(conds, sql` AND `);
  const from = match ? sql`apis_fts JOIN apis a ON a.rowid = apis_fts.rowid` : sql`apis a`;
  // An integer literal in ORDER BY means a column position in SQLite, so without a MATCH the tie-break is by time.
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

export async function categoriesWithCounts(db: Db): Promise<{ category: string; count: number }[]> {
  const rows = await db
    .selectFrom('apis')
    .select(['category', sql<number>`count(*)`.as('count')])
    .where('status', '=', 'live')
    .where('suspended_at', 'is', null)
    .groupBy('category')
    .orderBy('count', 'desc')
    .orderBy('category')
    .execute();
  return rows.map((r) => ({ category: r.category, count: Number(r.count) }));
}

/** One page of matching live listings as summaries, with the total match count (REST search, the catalog page). */
export async function searchCatalog(db: Db, p: SearchParams): Promise<CatalogSearchResult> {
  const { ids, total } = await searchListingIds(db, p);
  const page = pageOf(ids, p.limit, p.offset);
  const rows = await listingSummaries(db, { apiIds: page.data });
  return { ...page, total, sort: p.sort ?? 'relevance', data: rows.map(toListingSummary) };
}
