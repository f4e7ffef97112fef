/** `svc provider list`: your draft and live APIs. */
import { ProviderApiListSchema } from '../../../core/schemas/providers.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { table } from '../../output.js';

export default svcCommand({
  meta: { name: 'list', description: 'Your draft and live APIs' },
  examples: ['svc provider list'],
  async run() {
    const r = await api('GET', '/v1/provider/apis', ProviderApiListSchema, { query: { limit: 100 } });
    return {
      data: r,
      human: () => table(r.data, ['api_id', 'slug', 'name', 'status', 'endpoint_count', 'updated_at']),
    };
  },
});
