/** `svc provider pricing <id> [--file | --endpoint-id --price-cents]`: prices and discounts. */
import { readFileSync } from 'node:fs';
import { PricingResultSchema } from '../../../core/schemas/providers.schemas.js';
import { valueFlag } from '../../args.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { usageError } from '../../failure.js';
import { table } from '../../output.js';
import { apiDetailText } from './_view.js';
import { apiPath } from './_api-path.js';

export default svcCommand({
  meta: { name: 'pricing', description: 'Set endpoint prices (cents) and discounts' },
  args: {
    id: { type: 'positional', description: 'api_… id' },
    file: {
      type: 'string',
      description: 'JSON file: { "endpoints": [{ "endpoint_id", "price_cents", "discounts"? }] }',
    },
    'endpoint-id': { type: 'string', description: 'One endpoint (ep_…)' },
    'price-cents': valueFlag('cents', 'Its price in cents (0 = free)'),
  },
  examples: [
    'svc provider pricing api_01jd… --endpoint-id ep_01jd… --price-cents 2',
    'svc provider pricing api_01jd… --file prices.json',
  ],
  async run({ args }) {
    const { file } = args;
    const ep = args['endpoint-id'];
    const price = args['price-cents'];
    let body: unknown;
    if (file) {
      if (ep || price) throw usageError('use --file or --endpoint-id/--price-cents, not both');
      try {
        body = JSON.parse(readFileSync(file, 'utf8'));
      } catch (e) {
        throw usageError(`cannot read JSON from ${file}: ${(e as Error).message}`);
      }
    } else {
      if (!ep || price === undefined) throw usageError('pass --file, or --endpoint-id with --price-cents');
      body = { endpoints: [{ endpoint_id: ep, price_cents: Number(price) }] };
    }
    const r = await api('PUT', apiPath(args.id, '/pricing'), PricingResultSchema, { body, hint: { apiId: args.id } });
    return {
      data: r,
      human: async () =>
        [
          await table(r.results, ['endpoint_id', 'outcome', 'price_cents', 'effective_at']),
          '',
          await apiDetailText(r.api),
        ].join('\n'),
    };
  },
});
