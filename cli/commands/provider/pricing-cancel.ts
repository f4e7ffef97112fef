/** `svc provider pricing-cancel <apiId> <endpointId>`: cancel a scheduled price increase. */
import { CancelledPriceChangeSchema } from '../../../core/schemas/providers.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { apiPath } from './_api-path.js';

export default svcCommand({
  meta: { name: 'pricing-cancel', description: 'Cancel a pending price increase' },
  args: {
    apiId: { type: 'positional', description: 'api_… id' },
    endpointId: { type: 'positional', description: 'ep_… id' },
  },
  examples: ['svc provider pricing-cancel api_01jd… ep_01jd…'],
  async run({ args }) {
    const ep = args.endpointId;
    const r = await api(
      'DELETE',
      apiPath(args.apiId, `/pricing/${encodeURIComponent(ep)}/pending`),
      CancelledPriceChangeSchema,
    );
    return { data: r, human: `Pending increase on ${ep} cancelled.` };
  },
});
