/** `svc usage [--from] [--to]`: usage totals, per listing, and the newest call records. */
import { UsageSummarySchema } from '../../core/schemas/usage.schemas.js';
import { valueFlag } from '../args.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { dollars, plural, readableTime, table } from '../output.js';

export default svcCommand({
  meta: { name: 'usage', description: 'Usage history (default: the last 30 days)' },
  args: {
    from: valueFlag('date', 'Start, ISO date (2026-11-01) or date-time'),
    to: valueFlag('date', 'End (exclusive), ISO date or date-time'),
    key: { type: 'string', description: 'Only this key id' },
    limit: valueFlag('integer', 'At most this many call records'),
  },
  examples: ['svc usage --from 2026-11-01'],
  async run({ args }) {
    const r = await api('GET', '/v1/usage', UsageSummarySchema, {
      query: { from: args.from, to: args.to, key_id: args.key, limit: args.limit },
    });
    return {
      data: r,
      human: async () => {
        const t = r.totals;
        const head = `${plural(t.calls, 'call')} (${t.failed_calls} failed), ${dollars(t.charged_cents)} charged, ${readableTime(r.from)} to ${readableTime(r.to)}`;
        const parts = [head];
        if (r.by_api.length) parts.push('', 'by listing', await table(r.by_api, ['slug', 'calls', 'charged_cents']));
        parts.push(
          '',
          `newest ${plural(r.events.data.length, 'call')}${r.events.has_more ? ' (more with --limit)' : ''}`,
          await table(r.events.data, ['created_at', 'slug', 'method', 'path', 'status', 'charged_cents', 'request_id']),
        );
        return parts.join('\n');
      },
    };
  },
});
