/** `svc market overview|activity`: market aggregates and the activity feed. */
import { ActivityFeedSchema, MarketOverviewSchema } from '../../core/schemas/market.schemas.js';
import { valueFlag } from '../args.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import type { MarketOverview } from '../../core/schemas/market.schemas.js';
import { cell, plural, relativeTime, table } from '../output.js';

/** The overview as text: counts, one row per window, the top categories. */
export async function overviewText(r: MarketOverview): Promise<string> {
  const windows = Object.entries(r.windows).map(([window, w]) => ({ window, ...w }));
  return [
    `${plural(r.live_listings, 'live listing')} · ${plural(r.providers, 'provider')} · ${plural(r.endpoints, 'endpoint')} (computed ${relativeTime(r.computed_at)})`,
    '',
    await table(windows, ['window', 'calls', 'volume_cents', 'active_consumers']),
    '',
    'top categories',
    await table(r.top_categories, ['category', 'listings', 'calls_30d']),
  ].join('\n');
}

const overview = svcCommand({
  meta: { name: 'overview', description: 'Market aggregates' },
  examples: ['svc market overview'],
  async run() {
    const r = await api('GET', '/v1/market/overview', MarketOverviewSchema);
    return { data: r, human: () => overviewText(r) };
  },
});

const activity = svcCommand({
  meta: { name: 'activity', description: 'Recent marketplace activity' },
  args: { limit: valueFlag('integer', 'At most this many events') },
  examples: ['svc market activity --limit 10'],
  async run({ args }) {
    const r = await api('GET', '/v1/market/activity', ActivityFeedSchema, { query: { limit: args.limit } });
    const rows = r.data.map((e) => ({
      created_at: e.created_at,
      kind: e.kind,
      slug: e.slug,
      details: Object.entries(e.data)
        .map(([k, v]) => `${k.replace(/_cents$/, '')} ${cell(k, v)}`)
        .join(', '),
    }));
    return { data: r, human: () => table(rows, ['created_at', 'kind', 'slug', 'details']) };
  },
});

export default svcCommand({
  meta: { name: 'market', description: 'Market overview and activity feed' },
  examples: ['svc market overview'],
  subCommands: { overview: async () => overview, activity: async () => activity },
});
