/** Market overview and activity feed: public like the catalog (`catalog:read` when a credential is sent). */
import { createRoute, z } from '@hono/zod-openapi';
import { newRouter } from '../lib/http.js';
import { jsonResponse, problemResponses } from '../lib/openapi.js';
import { PaginationQuery, pageOf } from '../lib/pagination.js';
import { catalogReader } from '../catalog/catalog-access.js';
import { activityFeed, marketOverview } from './market.service.js';

export const marketRoutes = newRouter();

const Json = z.record(z.string(), z.unknown()).openapi('MarketJson');
const ok = (d: string) => ({ 200: jsonResponse(Json, d), ...problemResponses });

marketRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/market/overview',
    tags: ['market'],
    responses: ok('Listings, providers, calls and volume over 24h/7d/30d, top categories'),
  }),
  async (c) => {
    catalogReader(c);
    const ctx = c.get('ctx');
    return c.json((await marketOverview(ctx.db, ctx.clock.now())) as Record<string, unknown>, 200);
  },
);

marketRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/market/activity',
    tags: ['market'],
    request: { query: PaginationQuery },
    responses: ok('Publishes, unpublishes, price changes, new providers; newest first (paged)'),
  }),
  async (c) => {
    catalogReader(c);
    const { limit, offset } = c.req.valid('query');
    return c.json(
      pageOf(await activityFeed(c.get('ctx').db, limit, offset), limit, offset) as unknown as Record<string, unknown>,
      200,
    );
  },
);
