/**
 * Public catalog (`catalog:read` when a credential is sent; anonymous reads allowed, docs/catalog.md): search,
 * discover, categories, listing views, leaderboards, catalog requests.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { newRouter, type AppEnv } from '../lib/http.js';
import { jsonBody, jsonResponse, okResponses, problemResponses } from '../lib/openapi.js';
import { SvcError } from '../../core/errors.js';
import { clientIp } from '../lib/client-ip.js';
import { discoverListings } from './discover.service.js';
import { recordCatalogRequest } from './catalog-requests.service.js';
import {
  CatalogRequestInputSchema,
  CatalogRequestSchema,
  CatalogSearchQuerySchema,
  CatalogSearchResultSchema,
  CategoryListSchema,
  ConsumerOpenApiSchema,
  DiscoverInputSchema,
  DiscoverResultSchema,
  LeaderboardQuerySchema,
  LeaderboardSchema,
  ListingDetailSchema,
  ListingEndpointsSchema,
  ListingHistorySchema,
  ListingRanksSchema,
  ListingSchemaViewSchema,
  ListingStatsSchema,
} from '../../core/schemas/catalog.schemas.js';
import { categoriesWithCounts, searchCatalog } from './search.service.js';
import { BOARDS } from '../../core/enumerations.js';
import { PaginationQuerySchema } from '../../core/schemas/common.schemas.js';
import { storedDocumentText } from './stored-document.js';
import {
  consumerOpenApi,
  listingDetail,
  listingEndpoints,
  listingHistory,
  listingRanks,
  listingSchema,
  listingStats,
  visibleListing,
} from './inspect.service.js';
import { leaderboard } from '../market/market.service.js';

export const catalogRoutes = newRouter();

const tags = ['catalog'];
const SlugParam = z.object({
  slug: z
    .string()
    .min(1)
    .max(80)
    .openapi({ param: { name: 'slug', in: 'path' } }),
});

catalogRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/catalog/search',
    tags,
    request: { query: CatalogSearchQuerySchema },
    responses: okResponses(CatalogSearchResultSchema, 'Live listings matching the query (paged)'),
  }),
  async (c) => {
    return c.json(await searchCatalog(c.get('ctx').db, c.get('principal'), c.req.valid('query')), 200);
  },
);

catalogRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/catalog/discover',
    tags,
    request: { query: DiscoverInputSchema },
    responses: {
      200: jsonResponse(DiscoverResultSchema, 'Compact search for agents: listings with their callable endpoints'),
      ...problemResponses,
    },
  }),
  async (c) => {
    return c.json(await discoverListings(c.get('ctx').db, c.get('principal'), c.req.valid('query')), 200);
  },
);

catalogRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/catalog/categories',
    tags,
    responses: okResponses(CategoryListSchema, 'Categories of live listings with counts'),
  }),
  async (c) => {
    return c.json({ data: await categoriesWithCounts(c.get('ctx').db, c.get('principal')) }, 200);
  },
);

function visible(c: Context<AppEnv>, slug: string) {
  return visibleListing(c.get('ctx').db, c.get('principal'), slug);
}

catalogRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/apis/{slug}',
    tags,
    request: { params: SlugParam },
    responses: okResponses(ListingDetailSchema, 'Listing detail'),
  }),
  async (c) => {
    const api = await visible(c, c.req.valid('param').slug);
    return c.json(await listingDetail(c.get('ctx').db, api), 200);
  },
);

catalogRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/apis/{slug}/schema',
    tags,
    request: { params: SlugParam },
    responses: okResponses(
      ListingSchemaViewSchema,
      'Endpoints with parameters, request/response schemas, prices and pending increases',
    ),
  }),
  async (c) => {
    const api = await visible(c, c.req.valid('param').slug);
    return c.json(await listingSchema(c.get('ctx').db, api), 200);
  },
);

catalogRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/apis/{slug}/endpoints',
    tags,
    request: { params: SlugParam },
    responses: okResponses(ListingEndpointsSchema, 'Endpoints with prices'),
  }),
  async (c) => {
    const api = await visible(c, c.req.valid('param').slug);
    return c.json(await listingEndpoints(c.get('ctx').db, api), 200);
  },
);

catalogRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/apis/{slug}/stats',
    tags,
    request: { params: SlugParam },
    responses: okResponses(ListingStatsSchema, 'Calls, success rate, p50/p95 latency over 7 and 30 days'),
  }),
  async (c) => {
    const api = await visible(c, c.req.valid('param').slug);
    const ctx = c.get('ctx');
    return c.json(await listingStats(ctx.db, api, ctx.clock.now()), 200);
  },
);

catalogRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/apis/{slug}/history',
    tags,
    request: { params: SlugParam, query: PaginationQuerySchema },
    responses: okResponses(ListingHistorySchema, 'Price changes, newest first (paged)'),
  }),
  async (c) => {
    const api = await visible(c, c.req.valid('param').slug);
    const { limit, offset } = c.req.valid('query');
    return c.json(await listingHistory(c.get('ctx').db, api, limit, offset), 200);
  },
);

catalogRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/apis/{slug}/ranks',
    tags,
    request: { params: SlugParam },
    responses: okResponses(ListingRanksSchema, 'Rank on each leaderboard where the listing appears'),
  }),
  async (c) => {
    const api = await visible(c, c.req.valid('param').slug);
    return c.json(await listingRanks(c.get('ctx').db, api), 200);
  },
);

catalogRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/apis/{slug}/openapi',
    tags,
    request: { params: SlugParam },
    responses: okResponses(
      ConsumerOpenApiSchema,
      'The OpenAPI document as imported, with `servers` set to the gateway address of the listing',
    ),
  }),
  async (c) => {
    const api = await visible(c, c.req.valid('param').slug);
    const text = await storedDocumentText(api);
    if (!text) throw new SvcError('not_found', 'This listing has no stored OpenAPI document');
    return c.json(consumerOpenApi(text, c.get('ctx').config.urls.gateway, api.slug), 200);
  },
);

catalogRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/leaderboards/{board}',
    tags,
    request: { params: z.object({ board: z.enum(BOARDS) }), query: LeaderboardQuerySchema },
    responses: okResponses(LeaderboardSchema, 'A merit board (materialized; see docs/leaderboards.md)'),
  }),
  async (c) => {
    const { board } = c.req.valid('param');
    const q = c.req.valid('query');
    return c.json(await leaderboard(c.get('ctx').db, c.get('principal'), board, q.category ?? '', q.limit), 200);
  },
);

catalogRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/catalog/requests',
    tags,
    request: jsonBody(CatalogRequestInputSchema),
    responses: { 201: jsonResponse(CatalogRequestSchema, 'Recorded catalog request'), ...problemResponses },
  }),
  async (c) => {
    const input = c.req.valid('json');
    return c.json(await recordCatalogRequest(c.get('ctx'), c.get('principal'), clientIp(c), input), 201);
  },
);
