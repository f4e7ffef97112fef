/** `svc categories`: catalog categories with their listing counts. */
import { CategoryListSchema } from '../../core/schemas/catalog.schemas.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { describe } from '../output.js';

export default svcCommand({
  meta: { name: 'categories', description: 'List catalog categories' },
  examples: ['svc categories'],
  async run() {
    const r = await api('GET', '/v1/catalog/categories', CategoryListSchema);
    return { data: r, human: () => describe(r) };
  },
});
