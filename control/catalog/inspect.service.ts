/** Public views of one live listing: detail, schema (with pending increases), stats, price history, ranks, endpoints. */
import { sql } from 'kysely';
import type { Db, Row } from '../../core/db/database.js';
import { DAY_MS } from '../../core/clock.js';
import { parseDiscounts } from '../../core/discounts.js';
import { iso, parseJsonArray, toPendingPrice } from '../providers/apis.serialize.js';
import type { Board } from '../../core/enumerations.js';
import { pageOf } from '../lib/pagination.js';
import type {
  ConsumerOpenApi,
  ListingDetail,
  ListingEndpoints,
  ListingHistory,
  ListingRanks,
  ListingSchemaView,
  ListingStats,
  PriceChange,
  StatsWindow,
} from '../../core/schemas/catalog.schemas.js';
import { assertPublicRead, type Principal } from '../auth/principal.js';
import { getVisibleListing } from './listings.repo.js';
import { numOf } from '../../core/db/id-nums.js';

const parse = (s: string | null): unknown => {
  if (s === null) return null;
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
};

async function endpointsWithPending(db: Db, apiId: string) {
  const eps = await db
    .selectFrom('endpoints')
    .selectAll()
    .where('api_id', '=', apiId)
    .where('removed_at', 'is', null)
    .orderBy('position')
    .orderBy('id')
    .execute();
  const pending = await db
    .selectFrom('price_changes')
    .selectAll()
    .where('api_id', '=', apiId)
    .where('status', '=', 'pending')
    .execute();
  const byEp = new Map(pending.map((p) => [p.endpoint_id, p]));
  return eps.map((e) => ({ e, pending: byEp.get(e.id) }));
}

/**
 * The listing a caller may see, by slug: live listings for everyone, and the caller's own drafts. A public read: a
 * credential that is sent must carry `catalog:read`. The listing* views below take the row this returns.
 */
export async function visibleListing(db: Db, reader: Principal | undefined, slug: string): Promise<Row<'apis'>> {
  const p = assertPublicRead(reader, 'catalog:read');
  return getVisibleListing(db, slug, p?.orgId ?? null);
}

/** @public A view of a listing visibleListing returned. */
export async function listingDetail(db: Db, api: Row<'apis'>): Promise<ListingDetail> {
  const prov = await db.selectFrom('providers').selectAll().where('org_id', '=', api.org_id).executeTakeFirst();
  const eps = await endpointsWithPending(db, api.id);
  const terms = await db
    .selectFrom('legal_documents')
    .select(['id', 'version', 'acceptance_mode'])
    .where('api_id', '=', api.id)
    .where('status', '=', 'activated')
    .orderBy('activated_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  const prices = eps.map((x) => x.e.price_cents);
  return {
    slug: api.slug,
    name: api.name,
    summary: api.summary,
    description: api.description,
    category: api.category,
    tags: parseJsonArray(api.tags),
    status: api.status,
    docs_url: api.docs_url,
    logo_url: api.logo_url,
    provider: prov ? { slug: prov.slug, display_name: prov.display_name } : null,
    endpoint_count: eps.length,
    free_endpoints: prices.filter((p) => p === 0).length,
    min_price_cents: prices.length ? Math.min(...prices) : null,
    max_price_cents: prices.length ? Math.max(...prices) : null,
    pending_price_changes: eps.filter((x) => x.pending).length,
    terms: terms ? { document_id: terms.id, version: terms.version, acceptance_mode: terms.acceptance_mode } : null,
    last_verified_at: iso(api.last_verified_at),
    last_verify_ok: api.last_verify_ok === null ? null : api.last_verify_ok === 1,
    published_at: iso(api.published_at),
    endpoints: eps.map(({ e, pending }) => ({
      endpoint_id: e.id,
      method: e.method,
      path: e.path,
      summary: e.summary,
      price_cents: e.price_cents,
      pending_price: toPendingPrice(pending),
    })),
  };
}

/**
 * Endpoints with their schemas. A `$ref` in them names one of `components.schemas` (recursive or very large
 * schemas stay references; core/schema-refs.ts resolves and expands them).
 */
/** @public A view of a listing visibleListing returned. */
export async function listingSchema(db: Db, api: Row<'apis'>): Promise<ListingSchemaView> {
  const eps = await endpointsWithPending(db, api.id);
  return {
    slug: api.slug,
    components: { schemas: (parse(api.schema_components_json) ?? {}) as Record<string, unknown> },
    endpoints: eps.map(({ e, pending }) => ({
      endpoint_id: e.id,
      method: e.method,
      path: e.path,
      operation_id: e.operation_id,
      summary: e.summary,
      description: e.description,
      parameters: parse(e.parameters_json),
      request: parse(e.request_schema_json),
      response: parse(e.response_schema_json),
      price_cents: e.price_cents,
      discounts: parseDiscounts(e.discounts_json),
      pending_price: toPendingPrice(pending),
    })),
  };
}

/** @public A view of a listing visibleListing returned. */
export async function listingEndpoints(db: Db, api: Row<'apis'>): Promise<ListingEndpoints> {
  const eps = await endpointsWithPending(db, api.id);
  return {
    slug: api.slug,
    endpoints: eps.map(({ e, pending }) => ({
      endpoint_id: e.id,
      method: e.method,
      path: e.path,
      summary: e.summary,
      price_cents: e.price_cents,
      discounts: parseDiscounts(e.discounts_json),
      pending_price: toPendingPrice(pending),
    })),
  };
}

async function windowStats(db: Db, apiId: string, since: number, now: number): Promise<StatsWindow> {
  const agg = await db
    .selectFrom('usage_calls')
    .select([
      sql<number>`count(*)`.as('calls'),
      sql<number>`coalesce(sum(CASE WHEN status < 500 THEN 1 ELSE 0 END), 0)`.as('ok'),
      sql<number>`count(distinct org_num)`.as('orgs'),
    ])
    .where('api_num', '=', numOf(apiId))
    .where('created_at', '>=', since)
    .where('created_at', '<=', now)
    .executeTakeFirstOrThrow();
  const n = Number(agg.calls);
  const pct = async (q: number): Promise<number | null> => {
    if (n === 0) return null;
    const r = await db
      .selectFrom('usage_calls')
      .select('latency_ms')
      .where('api_num', '=', numOf(apiId))
      .where('created_at', '>=', since)
      .where('created_at', '<=', now)
      .orderBy('latency_ms')
      .limit(1)
      .offset(Math.min(n - 1, Math.floor(q * (n - 1))))
      .executeTakeFirst();
    return r?.latency_ms ?? null;
  };
  return {
    calls: n,
    distinct_orgs: Number(agg.orgs),
    success_rate: n ? Math.round((Number(agg.ok) / n) * 10_000) / 10_000 : null,
    p50_latency_ms: await pct(0.5),
    p95_latency_ms: await pct(0.95),
  };
}

/** @public A view of a listing visibleListing returned. */
export async function listingStats(db: Db, api: Row<'apis'>, now: number): Promise<ListingStats> {
  return {
    slug: api.slug,
    computed_at: iso(now),
    last_7d: await windowStats(db, api.id, now - 7 * DAY_MS, now),
    last_30d: await windowStats(db, api.id, now - 30 * DAY_MS, now),
  };
}

/** Price changes of the listing, newest first, one page. */
/** @public A view of a listing visibleListing returned. */
export async function listingHistory(db: Db, api: Row<'apis'>, limit: number, offset: number): Promise<ListingHistory> {
  const rows = await db
    .selectFrom('price_changes')
    .innerJoin('endpoints', 'endpoints.id', 'price_changes.endpoint_id')
    .select([
      'price_changes.id',
      'price_changes.endpoint_id',
      'endpoints.method',
      'endpoints.path',
      'price_changes.old_price_cents',
      'price_changes.new_price_cents',
      'price_changes.new_discounts_json',
      'price_changes.status',
      'price_changes.effective_at',
      'price_changes.created_at',
      'price_changes.cancelled_at',
    ])
    .where('price_changes.api_id', '=', api.id)
    .orderBy('price_changes.created_at', 'desc')
    .orderBy('price_changes.id', 'desc')
    .limit(limit + 1)
    .offset(offset)
    .execute();
  const data = rows.map(
    (r): PriceChange => ({
      change_id: r.id,
      endpoint_id: r.endpoint_id,
      method: r.method,
      path: r.path,
      old_price_cents: r.old_price_cents,
      new_price_cents: r.new_price_cents,
      new_discounts: r.new_discounts_json === null ? null : parseDiscounts(r.new_discounts_json),
      status: r.status,
      effective_at: iso(r.effective_at),
      created_at: iso(r.created_at),
      cancelled_at: iso(r.cancelled_at),
    }),
  );
  return { slug: api.slug, ...pageOf(data, limit, offset) };
}

/** @public A view of a listing visibleListing returned. */
export async function listingRanks(db: Db, api: Row<'apis'>): Promise<ListingRanks> {
  const rows = await db
    .selectFrom('leaderboard_entries')
    .select(['board', 'category', 'rank', 'score', 'computed_at'])
    .where('api_id', '=', api.id)
    .orderBy('board')
    .orderBy('category')
    .execute();
  return {
    slug: api.slug,
    ranks: rows.map((r) => ({
      // Only the refresh job writes this table, with names from BOARDS.
      board: r.board as Board,
      category: r.category || null,
      rank: r.rank,
      score: r.score,
      computed_at: iso(r.computed_at),
    })),
  };
}

/**
 * The stored OpenAPI document as consumers may see it: `servers` names the gateway address of the listing, never
 * the provider's upstream origin (which stays in the provider's own views).
 */
/** @public A listing's document as consumers see it (upstream origin removed). */
export function consumerOpenApi(openapiJson: string, gatewayUrl: string, slug: string): ConsumerOpenApi {
  const doc = JSON.parse(openapiJson) as Record<string, unknown>;
  stripUpstreamServers(doc);
  delete doc.host;
  delete doc.basePath;
  delete doc.schemes;
  return { ...doc, servers: [{ url: `${gatewayUrl.replace(/\/+$/, '')}/${slug}`, description: 'svc gateway' }] };
}

/** Schema and example subtrees: their keys are data (a property may be named `servers`), never server objects. */
const DATA_KEYS = new Set(['schema', 'schemas', 'example', 'examples', 'content', 'properties', 'items', 'allOf']);

/**
 * Removes every place an OpenAPI document names a server outside the top level: `servers` on path items and
 * operations (callbacks included) and a Link object's `server` (`responses.*.links.*.server`,
 * `components.links.*.server`), which would otherwise leak the upstream origin. Schema and example subtrees are
 * not walked (their keys are names the provider chose). Bounded: at most 100,000 nodes.
 */
function stripUpstreamServers(doc: Record<string, unknown>): void {
  const stack: Array<{ node: Record<string, unknown>; inLinks: boolean }> = [{ node: doc, inLinks: false }];
  let budget = 100_000;
  for (let item = stack.pop(); item && budget-- > 0; item = stack.pop()) {
    const { node, inLinks } = item;
    if (node !== doc && Array.isArray(node.servers)) delete node.servers;
    for (const [key, value] of Object.entries(node)) {
      if (!value || typeof value !== 'object' || DATA_KEYS.has(key)) continue;
      if (inLinks && !Array.isArray(value)) delete (value as { server?: unknown }).server;
      if (!Array.isArray(value)) stack.push({ node: value as Record<string, unknown>, inLinks: key === 'links' });
    }
  }
}
