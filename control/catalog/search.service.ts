/**
 * Catalog search over live listings: SQLite FTS5 (bm25 weighted name > summary > tags > paths > description),
 * filters `category` and `max_price_cents` (cheapest endpoint), sorts documented in docs/catalog.md.
 */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { normalizeCategory } from './category.js';
import { cachedSearch } from './search-cache.js';
import type { Sort } from '../../core/enumerations.js';
import type { CatalogSearchResult, ListingSummary } from '../../core/schemas/catalog.schemas.js';
import { pageOf } from '../lib/pagination.js';
import { PAGE_MAX_LIMIT } from '../../core/schemas/common.schemas.js';
import { listingSummaries, toListingSummary } from './listing-summary.js';
import { searchIndexOf } from './search-index.owner.js';
import { COLUMN_WEIGHTS } from './search-index.base.js';
import { dialectOf } from '../../core/db/dialect.js';
import { pgSearch } from './search.pg.js';
import { searchOrder } from './search-order.js';
import { assertPublicRead, type Principal } from '../auth/principal.js';

export interface SearchResult {
  ids: string[];
  total: number;
}

export interface SearchParams {
  query?: string | undefined;
  category?: string | undefined;
  max_price_cents?: number | undefined;
  sort?: Sort | undefined;
  limit: number;
  offset: number;
}

/** The searchable words of a query: lower-case letter and digit runs, at most 12. */
function queryWords(q: string): string[] {
  return (
    q
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu)
      ?.slice(0, 12) ?? []
  );
}

/**
 * Words of the query as quoted FTS5 prefix terms joined by OR: user text never reaches FTS5 syntax unescaped.
 * @public Pure: a search string to an FTS5 query.
 */
export function ftsQuery(q: string): string | null {
  const words = queryWords(q);
  return words.length === 0 ? null : matchOf(words);
}

const matchOf = (words: string[]) => words.map((w) => `"${w}"*`).join(' OR ');

/**
 * Returns ordered api ids (limit + 1 for has_more) and the exact total number of matches. Reads `listing_search`
 * (migration 0010): one row per searchable listing with the filter and sort columns, so a search without words reads
 * one index in order and stops after the page, and a search with words joins each FTS match by primary key.
 *
 * Results are read and cached a window at a time: RANK_WINDOW positions from a multiple of RANK_WINDOW, plus a
 * largest page, so paging through a query (offset 0, 20, 40, ...) ranks its matches once per window. Ranking
 * is the expensive part of a word search (bm25 for every match before the first 20 are known); reading 201 ranked
 * rows costs about what reading 21 does.
 * @internal A step of searchCatalog and discoverListings, which authorize.
 */
export async function searchListingIds(db: Db, p: SearchParams): Promise<SearchResult> {
  const s = normalized(p);
  return s ? pageFromWindow(db, s) : { ids: [], total: 0 };
}

/** The page `s.params` asks for, cut from its cached ranked window. */
async function pageFromWindow(db: Db, s: NormalizedSearch): Promise<SearchResult> {
  const { offset, limit } = s.params;
  const start = offset - (offset % RANK_WINDOW);
  const window = await cachedSearch(db, `window ${start} ${s.query}`, () =>
    runSearch(db, { ...s.params, offset: start, limit: RANK_WINDOW + PAGE_MAX_LIMIT }, s),
  );
  const from = offset - start;
  return { ids: window.ids.slice(from, from + limit + 1), total: window.total };
}

/** Positions ranked per cached window (see searchListingIds). */
export const RANK_WINDOW = 100;

/**
 * The search as the cache sees it: FTS terms and category normalised (`Developer Tools` → `developer-tools`, as
 * stored), so equivalent requests share entries; `query` names the search without its page, `page` with it.
 * Undefined when the query has no searchable word.
 */
interface NormalizedSearch {
  params: SearchParams;
  /** The query's words (null without a query): FTS5's phrases and the in-memory index's. */
  words: string[] | null;
  match: string | null;
  query: string;
  page: string;
}

function normalized(p: SearchParams): NormalizedSearch | undefined {
  const words = p.query ? queryWords(p.query) : null;
  if (words?.length === 0) return undefined;
  const match = words ? matchOf(words) : null;
  const category = p.category ? normalizeCategory(p.category) : undefined;
  const query = JSON.stringify([match, category, p.max_price_cents, p.sort ?? 'relevance']);
  return { params: { ...p, category }, words, match, query, page: `${query} ${p.limit} ${p.offset}` };
}

/**
 * One search, `p.category` already normalised: from the in-memory index (search-index.ts) when it can answer, else
 * FTS5's two statements. Both give the same ids in the same order (tests hold them equal).
 */
async function runSearch(db: Db, p: SearchParams, s: NormalizedSearch): Promise<SearchResult> {
  if (dialectOf(db) === 'postgres') return pgSearch(db, p, s.words);
  const indexed = searchIndexOf(db)?.search({ ...p, words: s.words, sort: p.sort ?? 'relevance' });
  return indexed ?? ftsSearch(db, p, s.match);
}

/**
 * The FTS5 search: the reference the in-memory index reproduces.
 * @internal A step of searchListingIds.
 */
export async function ftsSearch(db: Db, p: SearchParams, match: string | null): Promise<SearchResult> {
  const conds = [];
  if (match) conds.push(sql`apis_fts MATCH ${match}`);
  if (p.category) conds.push(sql`l.category = ${p.category}`);
  if (p.max_price_cents !== undefined) conds.push(sql`l.min_price_cents <= ${p.max_price_cents}`);
  const where = conds.length ? sql`WHERE ${sql.join(conds, sql` AND `)}` : sql``;
  const from = match ? sql`apis_fts JOIN listing_search l ON l.rowid = apis_fts.rowid` : sql`listing_search l`;
  // The ORDER BY before the final `api_id` tie-break (docs/catalog.md). Without words, each order is exactly the
  // column list of one `listing_search` index, so SQLite reads that index in order and stops after the page.
  const order = searchOrder(p.sort ?? 'relevance', match !== null ? sql`${BM25} ASC` : null);
  const rows = (
    await sql<{ id: string }>`SELECT l.api_id AS id FROM ${from} ${where}
      ORDER BY ${order}, l.api_id LIMIT ${p.limit + 1} OFFSET ${p.offset}`.execute(db)
  ).rows;
  const total = (await sql<{ n: number }>`SELECT count(*) AS n FROM ${from} ${where}`.execute(db)).rows[0]?.n ?? 0;
  return { ids: rows.map((r) => r.id), total: Number(total) };
}

/** FTS5's bm25 with the catalog's column weights (name > summary > tags > paths > description). */
const BM25 = sql.raw(`bm25(apis_fts, ${COLUMN_WEIGHTS.map((w) => w.toFixed(1)).join(', ')})`);

/** Searchable listings per category, most first: the counts a category filter would find. */
export async function categoriesWithCounts(
  db: Db,
  reader: Principal | undefined,
): Promise<{ category: string; count: number }[]> {
  assertPublicRead(reader, 'catalog:read');
  return cachedSearch(db, 'categories', async () => {
    const counted = searchIndexOf(db)?.categoryCounts();
    if (counted) return counted;
    const rows = await db
      .selectFrom('listing_search')
      .select(['category', sql<number>`count(*)`.as('count')])
      .groupBy('category')
      .orderBy('count', 'desc')
      .orderBy('category')
      .execute();
    return rows.map((r) => ({ category: r.category, count: Number(r.count) }));
  });
}

/** One page of matching live listings as summaries, with the total match count (REST search, the catalog page). */
export async function searchCatalog(
  db: Db,
  reader: Principal | undefined,
  p: SearchParams,
): Promise<CatalogSearchResult> {
  assertPublicRead(reader, 'catalog:read');
  const s = normalized(p);
  const sort = p.sort ?? 'relevance';
  if (!s) return { ...pageOf([], p.limit, p.offset), total: 0, sort, data: [] };
  // The whole answer is cached, summaries included: migrations 0010 and 0012 move the version on every write that
  // changes a summary's fields, and building 20 summaries was most of a repeated search's time.
  return cachedSearch(db, `answer ${s.page}`, async () => {
    const { ids, total } = await pageFromWindow(db, s);
    const page = pageOf(ids, p.limit, p.offset);
    return { ...page, total, sort, data: await summariesOf(db, page.data) };
  });
}

/**
 * The summaries of live listings `apiIds`, in that order: from the search index's summary cache where it holds them
 * (each dropped when the change log names its listing), the rest read and handed to it. Building 20 summaries
 * from SQLite was half of a search no cache had seen.
 */
async function summariesOf(db: Db, apiIds: string[]): Promise<ListingSummary[]> {
  const index = searchIndexOf(db);
  const cached = index?.cachedSummaries(apiIds);
  const missing = cached ? apiIds.filter((_, i) => cached.summaries[i] === undefined) : apiIds;
  const read = new Map(
    (await listingSummaries(db, { apiIds: missing })).map((r) => [r.api_id, toListingSummary(r)] as const),
  );
  if (cached && read.size > 0) index!.rememberSummaries(cached.stamp, read);
  return apiIds.flatMap((id, i) => cached?.summaries[i] ?? read.get(id) ?? []);
}
