/** `svc provider get <id>`: detail with pricing. */
import { ProviderApiDetailSchema } from '../../../core/schemas/providers.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { apiDetailText } from './_view.js';
import { apiPath } from './_api-path.js';

export default svcCommand({
  meta: { name: 'get', description: 'One of your APIs, with its endpoints and prices' },
  args: { id: { type: 'positional', description: 'api_… id' } },
  examples: ['svc provider get api_01jd…'],
  async run({ args }) {
    const r = await api('GET', apiPath(args.id), ProviderApiDetailSchema, { hint: { apiId: args.id } });
    return { data: r, human: () => apiDetailText(r) };
  },
});
