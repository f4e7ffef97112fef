/** Compact search for agents: live listings matching a query, each with its first callable endpoints. */
import type { Db } from '../../core/db/database.js';
import type { DiscoverInput, DiscoverResult } from '../../core/schemas/catalog.schemas.js';
import { listingSummaries } from './listing-summary.js';
import { searchListingIds } from './search.service.js';
import { assertPublicRead, type Principal } from '../auth/principal.js';

const ENDPOINTS_PER_LISTING = 10;

export async function discoverListings(
  db: Db,
  reader: Principal | undefined,
  q: DiscoverInput,
): Promise<DiscoverResult> {
  assertPublicRead(reader, 'catalog:read');
  const { ids } = await searchListingIds(db, {
    query: q.query,
    category: q.category,
    limit: q.max_results,
    offset: 0,
  });
  const rows = await listingSummaries(db, { apiIds: ids.slice(0, q.max_results) });
  const eps = rows.length
    ? await db
        .selectFrom('endpoints')
        .select(['api_id', 'method', 'path', 'summary', 'price_cents'])
        .where(
          'api_id',
          'in',
          rows.map((r) => r.api_id),
        )
        .where('removed_at', 'is', null)
        .orderBy('position')
        .execute()
    : [];
  return {
    query: q.query,
    results: rows.map((r) => ({
      slug: r.slug,
      name: r.name,
      summary: r.summary,
      category: r.category,
      min_price_cents: r.min_price_cents,
      endpoints: eps
        .filter((e) => e.api_id === r.api_id)
        .slice(0, ENDPOINTS_PER_LISTING)
        .map((e) => ({ method: e.method, path: e.path, summary: e.summary, price_cents: e.price_cents })),
    })),
  };
}
