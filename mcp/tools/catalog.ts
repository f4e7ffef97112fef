/** Catalog tools: find an API, read its listing and schema, see the market, ask for a missing API. */
import { z } from 'zod';
import { BOARDS, SORTS } from '../../core/enumerations.js';
import {
  CatalogRequestInputSchema,
  CatalogRequestSchema,
  CatalogSearchResultSchema,
  CategoryListSchema,
  DiscoverInputSchema,
  DiscoverResultSchema,
  LeaderboardSchema,
  ListingDetailSchema,
  ListingSchemaViewSchema,
} from '../../core/schemas/catalog.schemas.js';
import { defineTool, READ, WRITE, type ToolEnv } from '../tool-kit.js';
import { MarketOverviewSchema } from '../../core/schemas/market.schemas.js';
import { discoverListings } from '../../control/catalog/discover.service.js';
import { categoriesWithCounts, searchCatalog } from '../../control/catalog/search.service.js';
import { marketOverview, leaderboard } from '../../control/market/market.service.js';
import { recordCatalogRequest } from '../../control/catalog/catalog-requests.service.js';
import { listingDetail, listingSchema, visibleListing } from '../../control/catalog/inspect.service.js';
import { PAGE_DEFAULT_LIMIT } from '../../core/schemas/common.schemas.js';

/** A live listing, or the caller's own draft (the service checks a sent credential's catalog:read). */
const visible = (env: ToolEnv, slug: string) => visibleListing(env.ctx.db, env.caller.principal, slug);

const Slug = z.string().min(1).max(80).describe('Listing slug, e.g. demo-weather (from discover_tools/search_apis)');
/** LeaderboardQuerySchema's default. */
const LEADERBOARD_LIMIT = 20;
const Category = z.string().max(40).optional().describe('Category name from get_categories');

export const catalogTools = [
  defineTool({
    name: 'discover_tools',
    title: 'Discover APIs (compact)',
    description:
      'Best-matching live APIs with their endpoints and prices in cents (0 = free). Free. Next: get_schema, then call_api.',
    input: DiscoverInputSchema,
    output: DiscoverResultSchema,
    annotations: READ,
    run: async (a, env) => {
      return discoverListings(env.ctx.db, env.caller.principal, a);
    },
  }),
  defineTool({
    name: 'search_apis',
    title: 'Search the catalog',
    description:
      'Catalog search with filters and sorts; one page of listings. Free. Next: get_api_details or get_schema.',
    input: z.object({
      query: z.string().max(200).describe('Search words'),
      category: Category,
      sort: z.enum(SORTS).optional(),
      max_price_cents: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe('Only listings with an endpoint at or below this price'),
    }),
    output: CatalogSearchResultSchema,
    annotations: READ,
    run: async (a, env) => {
      return searchCatalog(env.ctx.db, env.caller.principal, { ...a, limit: PAGE_DEFAULT_LIMIT, offset: 0 });
    },
  }),
  defineTool({
    name: 'get_categories',
    title: 'Categories',
    description: 'Categories with their number of live listings. Free. Next: discover_tools with `category`.',
    input: z.object({}),
    output: CategoryListSchema,
    annotations: READ,
    run: async (_a, env) => {
      return { data: await categoriesWithCounts(env.ctx.db, env.caller.principal) };
    },
  }),
  defineTool({
    name: 'get_market_overview',
    title: 'Market overview',
    description: 'Market aggregates: listings, providers, call volume, top categories. Free.',
    input: z.object({}),
    output: MarketOverviewSchema,
    annotations: READ,
    run: async (_a, env) => marketOverview(env.ctx.db, env.caller.principal, env.ctx.clock.now()),
  }),
  defineTool({
    name: 'get_leaderboard',
    title: 'Leaderboard',
    description: 'A merit board of listings, optionally in one category. Free. Next: get_api_details.',
    input: z.object({ board: z.enum(BOARDS), category: Category }),
    output: LeaderboardSchema,
    annotations: READ,
    run: async (a, env) => {
      return leaderboard(env.ctx.db, env.caller.principal, a.board, a.category ?? '', LEADERBOARD_LIMIT);
    },
  }),
  defineTool({
    name: 'request_api',
    title: 'Request a missing API',
    description: 'Reports an API you need that is missing (providers see it); `email` to hear when it lands. Free.',
    input: CatalogRequestInputSchema,
    output: CatalogRequestSchema,
    annotations: WRITE,
    run: async (a, env) => {
      return recordCatalogRequest(env.ctx, env.caller.principal, env.ip, a);
    },
  }),
  defineTool({
    name: 'get_api_details',
    title: 'Listing detail',
    description:
      'One listing: provider, description, endpoints with prices, stats, terms requirement. Free. Next: get_schema.',
    input: z.object({ slug: Slug }),
    output: ListingDetailSchema,
    annotations: READ,
    run: async (a, env) => listingDetail(env.ctx.db, await visible(env, a.slug)),
  }),
  defineTool({
    name: 'get_schema',
    title: 'Endpoints and schemas',
    description:
      "A listing's endpoints: method, path, parameters, schemas, price in cents, scheduled increases. Free. Next: call_api with `endpoint` set to a path.",
    input: z.object({ slug: Slug }),
    output: ListingSchemaViewSchema,
    annotations: READ,
    run: async (a, env) => listingSchema(env.ctx.db, await visible(env, a.slug)),
  }),
];
