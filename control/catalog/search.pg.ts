/**
 * Catalog search on PostgreSQL (SVC_DATABASE_URL): the same filters, sorts, paging and totals as the FTS5 search
 * (search.service.ts), matched with PostgreSQL full-text search over the GIN expression index of migration
 * pg/0001_baseline (`english` configuration: name weight A, summary B, tags C, description D).
 *
 * Ordering differs from SQLite's by design (docs/scale-out.md "Search"): relevance is `ts_rank` (term frequency and
 * weights, no corpus statistics, so a rare word is not weighted up as bm25 does), words are Snowball-stemmed prefix
 * terms joined by OR like FTS5's, and endpoint paths are not part of the document. Every other sort (price,
 * popularity, reliability, newest) and the `api_id` tie-break are the same columns in the same order.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { PG_LISTING_TSV } from '../../core/db/migrations/pg/0001_baseline.js';
import type { SearchParams, SearchResult } from './search.service.js';
import { searchOrder } from './search-order.js';

const TSV = sql.raw(PG_LISTING_TSV);

/** `w1:* | w2:*`: the words are letters and digits only (queryWords), so they need no escaping. */
function tsQuery(words: string[]): string {
  return words.map((w) => `${w}:*`).join(' | ');
}

export async function pgSearch(db: Db, p: SearchParams, words: string[] | null): Promise<SearchResult> {
  const q = words?.length ? sql`to_tsquery('english', ${tsQuery(words)})` : null;
  const conds: RawBuilder<unknown>[] = [];
  if (q) conds.push(sql`${TSV} @@ ${q}`);
  if (p.category) conds.push(sql`l.category = ${p.category}`);
  if (p.max_price_cents !== undefined) conds.push(sql`l.min_price_cents <= ${p.max_price_cents}`);
  const where = conds.length ? sql`WHERE ${sql.join(conds, sql` AND `)}` : sql``;
  const from = sql`listing_search l JOIN apis ON apis.id = l.api_id`;
  const order = searchOrder(p.sort ?? 'relevance', q ? sql`ts_rank(${TSV}, ${q}) DESC` : null);
  const rows = (
    await sql<{ id: string }>`SELECT l.api_id AS id FROM ${from} ${where}
      ORDER BY ${order}, l.api_id LIMIT ${p.limit + 1} OFFSET ${p.offset}`.execute(db)
  ).rows;
  const total = (await sql<{ n: number }>`SELECT count(*) AS n FROM ${from} ${where}`.execute(db)).rows[0]?.n ?? 0;
  return { ids: rows.map((r) => r.id), total: Number(total) };
}
