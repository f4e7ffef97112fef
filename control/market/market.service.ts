/** Market reads: a materialized leaderboard, market overview (cached briefly), activity feed. */
import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { DAY_MS } from '../../core/clock.js';
import { normalizeCategory } from '../catalog/category.js';
import { listingSummaries, toListingSummary } from '../catalog/listing-summary.js';
import { lastLeaderboardRefresh } from './leaderboards.service.js';
import type { Board } from '../../core/enumerations.js';
import type { Leaderboard } from '../../core/schemas/catalog.schemas.js';
import type { ActivityEntry, ActivityFeed, MarketOverview } from '../../core/schemas/market.schemas.js';
import { pageOf } from '../lib/pagination.js';
import { iso } from '../providers/apis.serialize.js';
import { assertPublicRead, type Principal } from '../auth/principal.js';

export async function leaderboard(
  db: Db,
  reader: Principal | undefined,
  board: Board,
  rawCategory: string,
  limit: number,
): Promise<Leaderboard> {
  assertPublicRead(reader, 'catalog:read');
  const category = rawCategory ? normalizeCategory(rawCategory) : '';
  const rows = await db
    .selectFrom('leaderboard_entries')
    .selectAll()
    .where('board', '=', board)
    .where('category', '=', category)
    .orderBy('rank')
    .limit(limit)
    .execute();
  const summaries = await listingSummaries(db, { apiIds: rows.map((r) => r.api_id) });
  const byId = new Map(summaries.map((s) => [s.api_id, s]));
  return {
    board,
    category: category || null,
    computed_at: iso(rows[0]?.computed_at ?? lastLeaderboardRefresh()),
    entries: rows
      .filter((r) => byId.has(r.api_id))
      .map((r) => ({ rank: r.rank, score: r.score, listing: toListingSummary(byId.get(r.api_id)!) })),
  };
}

let cache: { at: number; value: MarketOverview } | null = null;
const CACHE_MS = 15_000;

export async function marketOverview(db: Db, reader: Principal | undefined, now: number): Promise<MarketOverview> {
  assertPublicRead(reader, 'catalog:read');
  if (cache && now - cache.at < CACHE_MS && now >= cache.at) return cache.value;
  const counts = await sql<{ listings: number; providers: number; endpoints: number }>`
    SELECT count(*) AS listings, count(DISTINCT org_id) AS providers,
      (SELECT count(*) FROM endpoints e JOIN apis x ON x.id = e.api_id WHERE x.status = 'live' AND x.suspended_at IS NULL AND e.removed_at IS NULL) AS endpoints
    FROM apis WHERE status = 'live' AND suspended_at IS NULL`.execute(db);
  const windows = {} as MarketOverview['windows'];
  for (const [name, ms] of [
    ['24h', DAY_MS],
    ['7d', 7 * DAY_MS],
    ['30d', 30 * DAY_MS],
  ] as const) {
    const r = await db
      .selectFrom('usage_calls')
      .select([
        sql<number>`count(*)`.as('calls'),
        sql<number>`coalesce(sum(charged_cents), 0)`.as('volume'),
        sql<number>`count(DISTINCT org_num)`.as('orgs'),
      ])
      .where('created_at', '>=', now - ms)
      .where('created_at', '<=', now)
      .executeTakeFirstOrThrow();
    windows[name] = { calls: Number(r.calls), volume_cents: Number(r.volume), active_consumers: Number(r.orgs) };
  }
  const cats = await sql<{ category: string; listings: number; calls_30d: number }>`
    SELECT a.category, count(*) AS listings, coalesce(sum(s.calls_30d), 0) AS calls_30d
    FROM apis a LEFT JOIN api_stats s ON s.api_id = a.id
    WHERE a.status = 'live' AND a.suspended_at IS NULL GROUP BY a.category ORDER BY calls_30d DESC, listings DESC LIMIT 10`.execute(
    db,
  );
  const c = counts.rows[0];
  const value = {
    computed_at: new Date(now).toISOString(),
    live_listings: Number(c?.listings ?? 0),
    providers: Number(c?.providers ?? 0),
    endpoints: Number(c?.endpoints ?? 0),
    windows,
    top_categories: cats.rows.map((r) => ({
      category: r.category,
      listings: Number(r.listings),
      calls_30d: Number(r.calls_30d),
    })),
  };
  cache = { at: now, value };
  return value;
}

/** Publishes, unpublishes, price changes and new providers, newest first, one page. */
export async function activityFeed(
  db: Db,
  reader: Principal | undefined,
  limit: number,
  offset: number,
): Promise<ActivityFeed> {
  assertPublicRead(reader, 'catalog:read');
  const rows = await db
    .selectFrom('activity')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .offset(offset)
    .execute();
  const entries = rows.map((r): ActivityEntry => {
    let data: Record<string, unknown> = {};
    try {
      data = JSON.parse(r.data_json) as Record<string, unknown>;
    } catch {
      /* keep empty */
    }
    return {
      activity_id: r.id,
      kind: r.kind,
      slug: typeof data.slug === 'string' && r.api_id ? data.slug : null,
      data,
      created_at: new Date(r.created_at).toISOString(),
    };
  });
  return pageOf(entries, limit, offset);
}
