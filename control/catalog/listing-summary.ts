/** One compact public shape for a live listing (search results, provider pages, boards), built from a few grouped queries. */
import { withoutIndex } from '../../core/db/dialect.js';
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { iso, parseJsonArray } from '../providers/apis.serialize.js';
import type { ListingSummary } from '../../core/schemas/catalog.schemas.js';

export interface ListingSummaryRow {
  api_id: string;
  slug: string;
  name: string;
  summary: string;
  category: string;
  tags: string;
  published_at: number | null;
  provider_slug: string | null;
  provider_name: string | null;
  endpoint_count: number;
  free_endpoints: number;
  min_price_cents: number | null;
  max_price_cents: number | null;
  calls_30d: number;
  success_30d: number;
  orgs_30d: number;
}

/** Live, unsuspended listings with their aggregates; `apiIds` keeps the caller's order. */
export async function listingSummaries(
  db: Db,
  filter: { orgId?: string; apiIds?: string[] },
): Promise<ListingSummaryRow[]> {
  if (filter.apiIds && filter.apiIds.length === 0) return [];
  let q = db
    .selectFrom('apis')
    .leftJoin('providers', 'providers.org_id', 'apis.org_id')
    .leftJoin('api_stats', 'api_stats.api_id', 'apis.id')
    .select([
      'apis.id as api_id',
      'apis.slug',
      'apis.name',
      'apis.summary',
      'apis.category',
      'apis.tags',
      'apis.published_at',
      'providers.slug as provider_slug',
      'providers.display_name as provider_name',
      sql<number>`coalesce(api_stats.calls_30d, 0)`.as('calls_30d'),
      sql<number>`coalesce(api_stats.success_30d, 0)`.as('success_30d'),
      sql<number>`coalesce(api_stats.orgs_30d, 0)`.as('orgs_30d'),
      sql<number>`(SELECT count(*) FROM endpoints e WHERE e.api_id = apis.id AND e.removed_at IS NULL)`.as(
        'endpoint_count',
      ),
      sql<number>`(SELECT count(*) FROM endpoints e WHERE e.api_id = apis.id AND e.removed_at IS NULL AND e.price_cents = 0)`.as(
        'free_endpoints',
      ),
      sql<
        number | null
      >`(SELECT min(price_cents) FROM endpoints e WHERE e.api_id = apis.id AND e.removed_at IS NULL)`.as(
        'min_price_cents',
      ),
      sql<
        number | null
      >`(SELECT max(price_cents) FROM endpoints e WHERE e.api_id = apis.id AND e.removed_at IS NULL)`.as(
        'max_price_cents',
      ),
    ])
    .where('apis.suspended_at', 'is', null);
  // Given ids, read them by primary key: SQLite would otherwise walk every live listing through `apis_status`
  // (the unary + keeps that index out of the plan).
  q = filter.apiIds
    ? q.where('apis.id', 'in', filter.apiIds).where(withoutIndex(db, 'apis.status'), '=', 'live')
    : q.where('apis.status', '=', 'live');
  if (filter.orgId) q = q.where('apis.org_id', '=', filter.orgId);
  const rows = await q
    .orderBy('apis.published_at', 'desc')
    .limit(filter.apiIds ? filter.apiIds.length : 200)
    .execute();
  if (!filter.apiIds) return rows;
  const byId = new Map(rows.map((r) => [r.api_id, r]));
  return filter.apiIds.map((id) => byId.get(id)).filter((r): r is ListingSummaryRow => r !== undefined);
}

export function toListingSummary(r: ListingSummaryRow): ListingSummary {
  return {
    slug: r.slug,
    name: r.name,
    summary: r.summary,
    category: r.category,
    tags: parseJsonArray(r.tags),
    provider: r.provider_slug ? { slug: r.provider_slug, display_name: r.provider_name ?? r.provider_slug } : null,
    endpoint_count: Number(r.endpoint_count),
    free_endpoints: Number(r.free_endpoints),
    min_price_cents: r.min_price_cents,
    max_price_cents: r.max_price_cents,
    calls_30d: Number(r.calls_30d),
    success_rate_30d:
      Number(r.calls_30d) > 0 ? Math.round((Number(r.success_30d) / Number(r.calls_30d)) * 10_000) / 10_000 : null,
    published_at: iso(r.published_at),
  };
}
