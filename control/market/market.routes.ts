/** Market overview and activity feed: public like the catalog (`catalog:read` when a credential is sent). */
import { createRoute } from '@hono/zod-openapi';
import { newRouter } from '../lib/http.js';
import { okResponses } from '../lib/openapi.js';
import { PaginationQuerySchema } from '../../core/schemas/common.schemas.js';
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
    const ctx = c.get('ctx');
    return c.json(await marketOverview(ctx.db, c.get('principal'), ctx.clock.now()), 200);
  },
);

marketRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/market/activity',
    tags: ['market'],
    request: { query: PaginationQuerySchema },
    responses: okResponses(
      ActivityFeedSchema,
      'Publishes, unpublishes, price changes, new providers; newest first (paged)',
    ),
  }),
  async (c) => {
    const { limit, offset } = c.req.valid('query');
    return c.json(await activityFeed(c.get('ctx').db, c.get('principal'), limit, offset), 200);
  },
);
