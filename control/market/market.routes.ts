/** Market overview and activity feed: public like the catalog (`catalog:read` when a credential is sent). */
import { createRoute } from '@hono/zod-openapi';
import { newRouter } from '../lib/http.js';
import { okResponses } from '../lib/openapi.js';
import { PaginationQuery } from '../lib/pagination.js';
import { catalogReader } from '../catalog/catalog-access.js';
import { activityFeed, marketOverview } from './market.service.js';
import { ActivityFeedSchema, MarketOverviewSchema } from '../../core/schemas/market.schemas.js';

export const marketRoutes = newRouter();

marketRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/market/overview',
    tags: ['market'],
    responses: okResponses(
      MarketOverviewSchema,
      'Listings, providers, calls and volume over 24h/7d/30d, top categories',
    ),
  }),
  async (c) => {
    catalogReader(c);
    const ctx = c.get('ctx');
    return c.json(await marketOverview(ctx.db, ctx.clock.now()), 200);
  },
);

marketRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/market/activity',
    tags: ['market'],
    request: { query: PaginationQuery },
    responses: okResponses(
      ActivityFeedSchema,
      'Publishes, unpublishes, price changes, new providers; newest first (paged)',
    ),
  }),
  async (c) => {
    catalogReader(c);
    const { limit, offset } = c.req.valid('query');
    return c.json(await activityFeed(c.get('ctx').db, limit, offset), 200);
  },
);
