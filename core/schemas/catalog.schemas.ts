/**
 * Catalog operations' input and output (discover, catalog requests), shared by the REST routes, the services, MCP
 * tools and the CLI, and the public listing views. Plain zod: importing this registers nothing.
 */
import { z } from 'zod';
import { DiscountTiersSchema } from '../discounts.js';
import { BOARDS, SORTS } from '../enumerations.js';
import { PageOf, PaginationQuerySchema, Timestamp } from './common.schemas.js';

export const DiscoverInputSchema = z.object({
  query: z.string().min(1).max(200),
  category: z.string().max(40).optional(),
  max_results: z.coerce.number().int().min(1).max(50).default(10),
});
export type DiscoverInput = z.infer<typeof DiscoverInputSchema>;

export const DiscoverEndpointSchema = z.object({
  method: z.string(),
  path: z.string(),
  summary: z.string(),
  price_cents: z.number().int(),
});

export const DiscoverResultSchema = z
  .object({
    query: z.string(),
    results: z.array(
      z.object({
        slug: z.string(),
        name: z.string(),
        summary: z.string(),
        category: z.string(),
        min_price_cents: z.number().int().nullable(),
        endpoints: z.array(DiscoverEndpointSchema).meta({ description: 'Up to 10 callable endpoints, in order' }),
      }),
    ),
  })
  .meta({ id: 'DiscoverResult' });
export type DiscoverResult = z.infer<typeof DiscoverResultSchema>;

export const CatalogRequestInputSchema = z
  .object({
    query: z.string().trim().min(2).max(500),
    email: z.string().email().max(254).optional(),
    notes: z.string().max(2000).optional(),
  })
  .strict();
export type CatalogRequestInput = z.infer<typeof CatalogRequestInputSchema>;

export const CatalogRequestSchema = z
  .object({
    // Not `request_id`: that name means the X-Svc-Request-Id of a call everywhere else.
    catalog_request_id: z.string(),
    query: z.string(),
    email: z.string().nullable(),
    notes: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'CatalogRequest' });
export type CatalogRequest = z.infer<typeof CatalogRequestSchema>;

// ---- Listing views: what GET /v1/catalog/*, /v1/apis/{slug}/* and /v1/leaderboards/* answer (inspect.service.ts,
// listing-summary.ts, market.service.ts build them; those functions return these types).

export const ProviderRefSchema = z.object({ slug: z.string(), display_name: z.string() });

/** The compact public shape of a live listing: search results, provider pages, boards. */
export const ListingSummarySchema = z
  .object({
    slug: z.string(),
    name: z.string(),
    summary: z.string(),
    category: z.string(),
    tags: z.array(z.string()),
    provider: ProviderRefSchema.nullable(),
    endpoint_count: z.number().int(),
    free_endpoints: z.number().int(),
    min_price_cents: z.number().int().nullable(),
    max_price_cents: z.number().int().nullable(),
    calls_30d: z.number().int(),
    success_rate_30d: z.number().nullable().meta({ description: 'Share of calls below 500, 0..1; null without calls' }),
    published_at: Timestamp.nullable(),
  })
  .meta({ id: 'ListingSummary' });
export type ListingSummary = z.infer<typeof ListingSummarySchema>;

export const CatalogSearchResultSchema = PageOf(ListingSummarySchema)
  .extend({ total: z.number().int(), sort: z.enum(SORTS) })
  .meta({ id: 'CatalogSearchResult' });
export type CatalogSearchResult = z.infer<typeof CatalogSearchResultSchema>;

export const CategoryCountSchema = z.object({ category: z.string(), count: z.number().int() });
export type CategoryCount = z.infer<typeof CategoryCountSchema>;
export const CategoryListSchema = z.object({ data: z.array(CategoryCountSchema) }).meta({ id: 'CategoryList' });

/** A scheduled price increase that has not taken effect yet (control/pricing/README.md). */
export const PendingPriceSchema = z
  .object({
    change_id: z.string(),
    old_price_cents: z.number().int(),
    new_price_cents: z.number().int(),
    new_discounts: DiscountTiersSchema.nullable().meta({ description: 'null: the change leaves discounts alone' }),
    effective_at: Timestamp,
  })
  .meta({ id: 'PendingPrice' });
export type PendingPrice = z.infer<typeof PendingPriceSchema>;

/** Fields every endpoint view shares (public and the provider's own). */
export const EndpointBase = {
  endpoint_id: z.string(),
  method: z.string(),
  path: z.string(),
  summary: z.string(),
  price_cents: z.number().int(),
};

/** What a listing says about itself, in the public detail and the provider's own view alike. */
export const ListingFacts = {
  slug: z.string(),
  name: z.string(),
  summary: z.string(),
  description: z.string(),
  category: z.string(),
  tags: z.array(z.string()),
  status: z.enum(['draft', 'live']),
  docs_url: z.string().nullable(),
  logo_url: z.string().nullable(),
};

export const ListingDetailSchema = z
  .object({
    ...ListingFacts,
    provider: ProviderRefSchema.nullable(),
    endpoint_count: z.number().int(),
    free_endpoints: z.number().int(),
    min_price_cents: z.number().int().nullable(),
    max_price_cents: z.number().int().nullable(),
    pending_price_changes: z.number().int(),
    terms: z
      .object({ document_id: z.string(), version: z.string(), acceptance_mode: z.enum(['required', 'optional']) })
      .nullable()
      .meta({ description: 'The active terms document; null when the listing has none' }),
    last_verified_at: Timestamp.nullable(),
    last_verify_ok: z.boolean().nullable(),
    published_at: Timestamp.nullable(),
    endpoints: z.array(z.object({ ...EndpointBase, pending_price: PendingPriceSchema.nullable() })),
  })
  .meta({ id: 'ListingDetail' });
export type ListingDetail = z.infer<typeof ListingDetailSchema>;

/** A JSON Schema (or OpenAPI parameter list) as imported: free-form by nature. */
const JsonSchemaValue = z.unknown().meta({ description: 'JSON Schema as imported; `$ref`s name components.schemas' });

export const ListingSchemaViewSchema = z
  .object({
    slug: z.string(),
    components: z.object({ schemas: z.record(z.string(), JsonSchemaValue) }),
    endpoints: z.array(
      z.object({
        ...EndpointBase,
        operation_id: z.string().nullable(),
        description: z.string(),
        parameters: JsonSchemaValue,
        request: JsonSchemaValue,
        response: JsonSchemaValue,
        discounts: DiscountTiersSchema,
        pending_price: PendingPriceSchema.nullable(),
      }),
    ),
  })
  .meta({ id: 'ListingSchemaView' });
export type ListingSchemaView = z.infer<typeof ListingSchemaViewSchema>;

export const ListingEndpointsSchema = z
  .object({
    slug: z.string(),
    endpoints: z.array(
      z.object({ ...EndpointBase, discounts: DiscountTiersSchema, pending_price: PendingPriceSchema.nullable() }),
    ),
  })
  .meta({ id: 'ListingEndpoints' });
export type ListingEndpoints = z.infer<typeof ListingEndpointsSchema>;

export const StatsWindowSchema = z.object({
  calls: z.number().int(),
  distinct_orgs: z.number().int(),
  success_rate: z.number().nullable().meta({ description: 'Share of calls below 500, 0..1; null without calls' }),
  p50_latency_ms: z.number().int().nullable(),
  p95_latency_ms: z.number().int().nullable(),
});
export type StatsWindow = z.infer<typeof StatsWindowSchema>;

export const ListingStatsSchema = z
  .object({ slug: z.string(), computed_at: Timestamp, last_7d: StatsWindowSchema, last_30d: StatsWindowSchema })
  .meta({ id: 'ListingStats' });
export type ListingStats = z.infer<typeof ListingStatsSchema>;

export const PriceChangeSchema = z
  .object({
    change_id: z.string(),
    endpoint_id: z.string(),
    method: z.string(),
    path: z.string(),
    old_price_cents: z.number().int(),
    new_price_cents: z.number().int(),
    new_discounts: DiscountTiersSchema.nullable(),
    status: z.enum(['applied', 'pending', 'cancelled']),
    effective_at: Timestamp,
    created_at: Timestamp,
    cancelled_at: Timestamp.nullable(),
  })
  .meta({ id: 'PriceChange' });
export type PriceChange = z.infer<typeof PriceChangeSchema>;

export const ListingHistorySchema = PageOf(PriceChangeSchema)
  .extend({ slug: z.string() })
  .meta({ id: 'ListingHistory' });
export type ListingHistory = z.infer<typeof ListingHistorySchema>;

export const ListingRanksSchema = z
  .object({
    slug: z.string(),
    ranks: z.array(
      z.object({
        board: z.enum(BOARDS),
        category: z.string().nullable().meta({ description: 'null: the all-categories board' }),
        rank: z.number().int(),
        score: z.number(),
        computed_at: Timestamp,
      }),
    ),
  })
  .meta({ id: 'ListingRanks' });
export type ListingRanks = z.infer<typeof ListingRanksSchema>;

export const LeaderboardSchema = z
  .object({
    board: z.enum(BOARDS),
    category: z.string().nullable(),
    computed_at: Timestamp.nullable().meta({ description: 'null until the first refresh' }),
    entries: z.array(z.object({ rank: z.number().int(), score: z.number(), listing: ListingSummarySchema })),
  })
  .meta({ id: 'Leaderboard' });
export type Leaderboard = z.infer<typeof LeaderboardSchema>;

/** The imported OpenAPI document as consumers see it: any OpenAPI 3.x / Swagger 2.0 document, `servers` replaced. */
export const ConsumerOpenApiSchema = z
  .object({
    openapi: z.string().optional(),
    swagger: z.string().optional(),
    info: z.record(z.string(), z.unknown()).optional(),
    paths: z.record(z.string(), z.unknown()).optional(),
    servers: z.array(z.object({ url: z.string(), description: z.string() })).meta({
      description: "One entry: the listing's gateway address (never the provider's upstream)",
    }),
  })
  .catchall(z.unknown())
  .meta({ id: 'ConsumerOpenApiDocument' });
export type ConsumerOpenApi = z.infer<typeof ConsumerOpenApiSchema>;

/** GET /v1/catalog/search (and the /catalog page): words, filters, sort and paging, all from a query string. */
export const CatalogSearchQuerySchema = PaginationQuerySchema.extend({
  query: z.string().max(200).optional(),
  category: z.string().max(40).optional(),
  max_price_cents: z.coerce.number().int().min(0).max(100_000_000).optional(),
  sort: z.enum(SORTS).optional().meta({ description: 'relevance (default), price, popularity, reliability, newest' }),
});

/** GET /v1/leaderboards/{board} and get_leaderboard. */
export const LeaderboardQuerySchema = z.object({
  category: z.string().max(40).optional(),
  limit: z.coerce.number().int().min(1).max(50).default(20),
});

/** The gateway's free quote (`/_quote/<slug>/<path>`, gateway/steps/quote.ts): the price and whether the call would pass. */
export const QuoteSchema = z
  .object({
    slug: z.string(),
    endpoint_id: z.string(),
    method: z.string(),
    price_cents: z.number().int(),
    base_price_cents: z.number().int(),
    would_pass: z.boolean(),
    code: z.string().nullable(),
    detail: z.string().nullable(),
    available_cents: z.number().int().nullable(),
  })
  .meta({ id: 'Quote' });
export type Quote = z.infer<typeof QuoteSchema>;
