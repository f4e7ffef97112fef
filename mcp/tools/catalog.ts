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
import { answer, defineTool, READ, rest, seg, WRITE } from '../tool-kit.js';
import { MarketOverviewSchema } from '../../core/schemas/market.schemas.js';

const Slug = z.string().min(1).max(80).describe('Listing slug, e.g. demo-weather (from discover_tools/search_apis)');
const Category = z.string().max(40).optional().describe('Category name from get_categories');

export const catalogTools = [
  defineTool({
    name: 'discover_tools',
    title: 'Discover APIs (compact)',
    description:
      'Compact catalog search for agents: the best matching live APIs with their endpoints and prices in cents (0 = free). Free to call. Next: get_schema for the inputs, then call_api.',
    input: DiscoverInputSchema,
    output: DiscoverResultSchema,
    annotations: READ,
    run: async (a, env) => answer('discover_tools', env, await rest(env, 'GET', '/v1/catalog/discover', { query: a })),
  }),
  defineTool({
    name: 'search_apis',
    title: 'Search the catalog',
    description:
      'Full catalog search with filters and sorts (relevance, price, popularity, reliability, newest); answers one page of listings. Free. Next: get_api_details or get_schema.',
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
    run: async (a, env) => answer('search_apis', env, await rest(env, 'GET', '/v1/catalog/search', { query: a })),
  }),
  defineTool({
    name: 'get_categories',
    title: 'Categories',
    description:
      'Catalog categories with the number of live listings in each. Free. Use a name as `category` elsewhere.',
    input: z.object({}),
    output: CategoryListSchema,
    annotations: READ,
    run: async (_a, env) => answer('get_categories', env, await rest(env, 'GET', '/v1/catalog/categories')),
  }),
  defineTool({
    name: 'get_market_overview',
    title: 'Market overview',
    description: 'Market aggregates: listings, providers, call volume and top categories. Free.',
    input: z.object({}),
    output: MarketOverviewSchema,
    annotations: READ,
    run: async (_a, env) => answer('get_market_overview', env, await rest(env, 'GET', '/v1/market/overview')),
  }),
  defineTool({
    name: 'get_leaderboard',
    title: 'Leaderboard',
    description: `A merit board of listings (${BOARDS.join(', ')}), optionally in one category. Free.`,
    input: z.object({ board: z.enum(BOARDS), category: Category }),
    output: LeaderboardSchema,
    annotations: READ,
    run: async (a, env) =>
      answer(
        'get_leaderboard',
        env,
        await rest(env, 'GET', `/v1/leaderboards/${seg(a.board)}`, { query: { category: a.category } }),
      ),
  }),
  defineTool({
    name: 'request_api',
    title: 'Request a missing API',
    description:
      'Tell the marketplace an API you need is missing (recorded for providers; nothing is charged). Give an email to hear when it lands.',
    input: CatalogRequestInputSchema,
    output: CatalogRequestSchema,
    annotations: WRITE,
    run: async (a, env) => answer('request_api', env, await rest(env, 'POST', '/v1/catalog/requests', { body: a })),
  }),
  defineTool({
    name: 'get_api_details',
    title: 'Listing detail',
    description:
      'One listing: provider, description, endpoints with prices, stats and terms requirement. Free. Next: get_schema.',
    input: z.object({ slug: Slug }),
    output: ListingDetailSchema,
    annotations: READ,
    run: async (a, env) => answer('get_api_details', env, await rest(env, 'GET', `/v1/apis/${seg(a.slug)}`)),
  }),
  defineTool({
    name: 'get_schema',
    title: 'Endpoints and schemas',
    description:
      "A listing's endpoints: method, path, parameters, request and response schemas, price in cents and any scheduled price increase. Free. Next: call_api with `endpoint` set to a path.",
    input: z.object({ slug: Slug }),
    output: ListingSchemaViewSchema,
    annotations: READ,
    run: async (a, env) => answer('get_schema', env, await rest(env, 'GET', `/v1/apis/${seg(a.slug)}/schema`)),
  }),
];
