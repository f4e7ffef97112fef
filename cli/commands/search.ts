/** `svc search <query>`: full catalog search. */
import { CatalogSearchResultSchema } from '../../core/schemas/catalog.schemas.js';
import { valueFlag } from '../args.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { SORTS } from '../../core/enumerations.js';
import { table } from '../output.js';

export default svcCommand({
  meta: { name: 'search', description: 'Search the catalog' },
  args: {
    query: { type: 'positional', description: 'What to look for (quote several words)' },
    category: { type: 'string', description: 'Only this category' },
    sort: { type: 'enum', options: [...SORTS], description: 'Order of results' },
    'max-price': valueFlag('cents', 'Only endpoints up to this many cents'),
    limit: valueFlag('integer', 'At most this many results'),
  },
  examples: ['svc search weather', 'svc search "currency rates" --sort price --max-price 2'],
  async run({ args }) {
    const r = await api('GET', '/v1/catalog/search', CatalogSearchResultSchema, {
      query: {
        query: args.query,
        category: args.category,
        sort: args.sort,
        max_price_cents: args['max-price'],
        limit: args.limit,
      },
    });
    return {
      data: r,
      human: () => table(r.data, ['slug', 'name', 'category', 'min_price_cents', 'max_price_cents', 'summary']),
    };
  },
});
