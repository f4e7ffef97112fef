/** `svc provider pricing-cancel <apiId> <endpointId>`: cancel a scheduled price increase. */
import { api } from '../../client.js';
import { str, svcCommand } from '../../command.js';
import { apiPath } from './_api-path.js';

export default svcCommand({
  meta: { name: 'pricing-cancel', description: 'Cancel a pending price increase' },
  args: {
    apiId: { type: 'positional', description: 'api_… id' },
    endpointId: { type: 'positional', description: 'ep_… id' },
  },
  examples: ['svc provider pricing-cancel api_01jd… ep_01jd…'],
  async run({ args }) {
    const ep = str(args, 'endpointId')!;
    const r = await api('DELETE', apiPath(str(args, 'apiId')!, `/pricing/${encodeURIComponent(ep)}/pending`));
    return { data: r, human: `Pending increase on ${ep} cancelled.` };
  },
});
