/** `svc usage [--from] [--to]`: usage totals and call records. */
import { api } from '../client.js';
import { str, svcCommand } from '../command.js';
import { describe, dollars, table } from '../output.js';

export default svcCommand({
  meta: { name: 'usage', description: 'Usage history (default: the last 30 days)' },
  args: {
    from: { type: 'string', description: 'Start, ISO date (2026-11-01) or date-time' },
    to: { type: 'string', description: 'End (exclusive), ISO date or date-time' },
    key: { type: 'string', description: 'Only this key id' },
    limit: { type: 'string', description: 'At most this many call records' },
  },
  examples: ['svc usage --from 2026-11-01'],
  async run({ args }) {
    const r = await api<Record<string, unknown>>('GET', '/v1/usage', {
      query: { from: str(args, 'from'), to: str(args, 'to'), key_id: str(args, 'key'), limit: str(args, 'limit') },
    });
    return {
      data: r,
      human: async () => {
        const totals = r.totals as { calls?: number; charged_cents?: number } | undefined;
        const calls = (r.events as { data?: Record<string, unknown>[] } | undefined)?.data;
        const head = totals
          ? `${totals.calls ?? 0} calls, ${dollars(totals.charged_cents ?? 0)} charged`
          : await describe(r);
        if (!Array.isArray(calls)) return head;
        return `${head}\n${await table(calls, ['created_at', 'slug', 'method', 'path', 'status', 'charged_cents'])}`;
      },
    };
  },
});
