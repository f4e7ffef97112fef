/** `svc inspect <slug>`: a listing, or one of its views (schema, stats, history, ranks, endpoints, openapi). */
import {
  ConsumerOpenApiSchema,
  ListingDetailSchema,
  ListingEndpointsSchema,
  ListingHistorySchema,
  ListingRanksSchema,
  type ListingSchemaView,
  ListingSchemaViewSchema,
  ListingStatsSchema,
} from '../../core/schemas/catalog.schemas.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { usageError } from '../failure.js';
import { describe, dollars, table, termWidth, wrap } from '../output.js';

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
    const { slug } = args;
    const chosen = VIEWS.filter((v) => args[v]);
    if (chosen.length > 1) throw usageError(`pick one view: ${chosen.map((v) => `--${v}`).join(' or ')}`);
    const view = chosen[0];
    const base = `/v1/apis/${encodeURIComponent(slug)}`;
    const opts = { hint: { slug } };
    switch (view) {
      case undefined: {
        const r = await api('GET', base, ListingDetailSchema, opts);
        return { data: r, human: () => describe(r) };
      }
      case 'endpoints': {
        const r = await api('GET', `${base}/endpoints`, ListingEndpointsSchema, opts);
        return {
          data: r,
          human: () => table(r.endpoints, ['method', 'path', 'price_cents', 'summary', 'endpoint_id']),
        };
      }
      case 'schema': {
        const r = await api('GET', `${base}/schema`, ListingSchemaViewSchema, opts);
        return { data: r, human: () => schemaText(r) };
      }
      case 'stats': {
        const r = await api('GET', `${base}/stats`, ListingStatsSchema, opts);
        const rows = [
          { window: 'last 7 days', ...r.last_7d },
          { window: 'last 30 days', ...r.last_30d },
        ];
        return {
          data: r,
          human: () =>
            table(rows, ['window', 'calls', 'distinct_orgs', 'success_rate', 'p50_latency_ms', 'p95_latency_ms']),
        };
      }
      case 'history': {
        const r = await api('GET', `${base}/history`, ListingHistorySchema, opts);
        return {
          data: r,
          human: () =>
            table(r.data, ['effective_at', 'method', 'path', 'old_price_cents', 'new_price_cents', 'status']),
        };
      }
      case 'ranks': {
        const r = await api('GET', `${base}/ranks`, ListingRanksSchema, opts);
        const rows = r.ranks.map((x) => ({ ...x, category: x.category ?? 'all' }));
        return { data: r, human: () => table(rows, ['board', 'category', 'rank', 'score', 'computed_at']) };
      }
      default: {
        const r = await api('GET', `${base}/openapi`, ConsumerOpenApiSchema, opts);
        return { data: r, human: JSON.stringify(r, null, 2) };
      }
    }
  },
});

type SchemaView = ListingSchemaView;

/** Each endpoint with its price, discounts and the JSON Schemas of its parameters, request and response. */
export function schemaText(r: SchemaView): string {
  const width = termWidth() - 4;
  const block = (title: string, v: unknown) =>
    v === null || v === undefined
      ? []
      : [
          `  ${title}`,
          ...JSON.stringify(v, null, 2)
            .split('\n')
            .flatMap((l) => wrap(l, width).split('\n'))
            .map((l) => `    ${l}`),
        ];
  const parts = r.endpoints.map((e) => {
    const price = `${dollars(e.price_cents)} per call${e.discounts.length ? `; ${e.discounts.map((d) => `${d.percent_off}% off after ${d.min_calls} calls`).join(', ')}` : ''}`;
    const pending = e.pending_price
      ? [`  price rises to ${dollars(e.pending_price.new_price_cents)} on ${e.pending_price.effective_at}`]
      : [];
    return [
      `${e.method} ${e.path}  (${e.endpoint_id})`,
      ...(e.summary ? [`  ${e.summary}`] : []),
      `  ${price}`,
      ...pending,
      ...block('parameters', e.parameters),
      ...block('request', e.request),
      ...block('response', e.response),
    ].join('\n');
  });
  const comps = Object.keys(r.components.schemas);
  if (comps.length) parts.push(['components', ...block('schemas', r.components.schemas)].join('\n'));
  return parts.join('\n\n');
}
