/** `svc search <query>`: full catalog search. */
import { api } from '../client.js';
import { str, svcCommand } from '../command.js';
import { SORTS } from '../../core/enumerations.js';
import { table } from '../output.js';

export default svcCommand({
  meta: { name: 'search', description: 'Search the catalog' },
  args: {
    query: { type: 'positional', description: 'What to look for (quote several words)' },
    category: { type: 'string', description: 'Only this category' },
    sort: { type: 'enum', options: [...SORTS], description: 'Order of results' },
    'max-price': { type: 'string', description: 'Only endpoints up to this many cents' },
    limit: { type: 'string', description: 'At most this many results' },
  },
  examples: ['svc search weather', 'svc search "currency rates" --sort price --max-price 2'],
  async run({ args }) {
    const r = await api<{ data: Record<string, unknown>[] }>('GET', '/v1/catalog/search', {
      query: {
        query: str(args, 'query'),
        category: str(args, 'category'),
        sort: str(args, 'sort'),
        max_price_cents: str(args, 'max-price'),
        limit: str(args, 'limit'),
      },
    });
    return {
      data: r,
      human: () => table(r.data, ['slug', 'name', 'category', 'min_price_cents', 'max_price_cents', 'summary']),
    };
  },
});
