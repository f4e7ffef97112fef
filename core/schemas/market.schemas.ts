/**
 * Market overview and activity feed (control/market/market.service.ts). Shared by the REST routes, the services,
 * MCP tools and the CLI. Plain zod: importing this registers nothing.
 */
import { z } from 'zod';
import { CentsAmount, PageOf, Timestamp } from './common.schemas.js';

export const MarketWindowSchema = z.object({
  calls: z.number().int(),
  volume_cents: CentsAmount,
  active_consumers: z.number().int(),
});

export const MarketOverviewSchema = z
  .object({
    computed_at: Timestamp.meta({ description: 'Cached for up to 15 seconds' }),
    live_listings: z.number().int(),
    providers: z.number().int(),
    endpoints: z.number().int(),
    windows: z.object({ '24h': MarketWindowSchema, '7d': MarketWindowSchema, '30d': MarketWindowSchema }),
    top_categories: z.array(
      z.object({ category: z.string(), listings: z.number().int(), calls_30d: z.number().int() }),
    ),
  })
  .meta({ id: 'MarketOverview' });
export type MarketOverview = z.infer<typeof MarketOverviewSchema>;

export const ActivityKindSchema = z.enum(['publish', 'unpublish', 'price_change', 'new_provider']);

export const ActivityEntrySchema = z
  .object({
    activity_id: z.string(),
    kind: ActivityKindSchema,
    slug: z.string().nullable().meta({ description: 'The listing concerned; null for new_provider' }),
    data: z.record(z.string(), z.unknown()).meta({ description: 'Kind-specific details (names, prices)' }),
    created_at: Timestamp,
  })
  .meta({ id: 'ActivityEntry' });
export type ActivityEntry = z.infer<typeof ActivityEntrySchema>;

export const ActivityFeedSchema = PageOf(ActivityEntrySchema).meta({ id: 'ActivityFeed' });
export type ActivityFeed = z.infer<typeof ActivityFeedSchema>;
