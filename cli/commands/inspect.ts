/** `svc inspect <slug>`: a listing, or one of its views (schema, stats, history, ranks, endpoints, openapi). */
import { api } from '../client.js';
import { str, svcCommand } from '../command.js';
import { usageError } from '../failure.js';
import { describe, table } from '../output.js';

const VIEWS = ['schema', 'stats', 'history', 'ranks', 'endpoints', 'openapi'] as const;

export default svcCommand({
  meta: { name: 'inspect', description: 'Show a listing, or one view of it' },
  args: {
    slug: { type: 'positional', description: 'Listing slug' },
    schema: { type: 'boolean', description: 'Endpoints with schemas, prices and pending increases' },
    stats: { type: 'boolean', description: 'Calls, success rate, latency' },
    history: { type: 'boolean', description: 'Price history' },
    ranks: { type: 'boolean', description: 'Ranks on each board' },
    endpoints: { type: 'boolean', description: 'Endpoints with prices' },
    openapi: { type: 'boolean', description: 'The imported OpenAPI document' },
  },
  examples: ['svc inspect demo-weather', 'svc inspect demo-weather --endpoints'],
  async run({ args }) {
    const slug = str(args, 'slug')!;
    const chosen = VIEWS.filter((v) => args[v]);
    if (chosen.length > 1) throw usageError(`pick one view: ${chosen.map((v) => `--${v}`).join(' or ')}`);
    const view = chosen[0];
    const path = `/v1/apis/${encodeURIComponent(slug)}${view ? `/${view}` : ''}`;
    const r = await api<Record<string, unknown>>('GET', path, { hint: { slug } });
    const list = (r.data ?? r.endpoints) as Record<string, unknown>[] | undefined;
    if (view === 'endpoints' && Array.isArray(list))
      return { data: r, human: () => table(list, ['method', 'path', 'price_cents', 'summary', 'endpoint_id']) };
    if (view === 'openapi') return { data: r, human: JSON.stringify(r, null, 2) };
    return { data: r, human: () => describe(r) };
  },
});
