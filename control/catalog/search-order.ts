/**
 * The ORDER BY of a catalog search, on either store: `rank` is the text match's relevance as an ordering term
 * (SQLite's `bm25(…) ASC`, PostgreSQL's `ts_rank(…) DESC`), or null for a search without words, whose relevance ties
 * break newest first.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Sort } from '../../core/enumerations.js';

export function searchOrder(sort: Sort, rank: RawBuilder<unknown> | null): RawBuilder<unknown> {
  const relevance = rank ?? sql`l.published_at DESC`;
  switch (sort) {
    case 'price':
      return rank
        ? sql`l.min_price_cents ASC, ${relevance}, l.published_at DESC`
        : sql`l.min_price_cents ASC, ${relevance}`;
    case 'popularity':
      return sql`l.orgs_30d DESC, l.calls_30d DESC, ${relevance}`;
    case 'reliability':
      return sql`l.reliability DESC, l.calls_30d DESC, ${relevance}`;
    case 'newest':
      return sql`l.published_at DESC`;
    case 'relevance':
      return rank ? sql`${relevance}, l.orgs_30d DESC, l.published_at DESC` : searchOrder('popularity', null);
  }
}
