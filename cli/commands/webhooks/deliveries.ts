/** `svc webhooks deliveries <id>`: the delivery log of an endpoint, newest first. */
import { valueFlag } from '../../args.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { table } from '../../output.js';
import { WebhookDeliveryListSchema } from '../../../core/schemas/webhooks.schemas.js';
import { DELIVERY_COLUMNS, idArg } from './shared.js';

export default svcCommand({
  meta: { name: 'deliveries', description: 'Delivery log of an endpoint (status, attempts, last answer)' },
  args: { ...idArg, limit: valueFlag('integer', 'Rows (1-100, default 20)') },
  examples: ['svc webhooks deliveries whe_… --limit 50'],
  async run({ args }) {
    const id = args.id;
    const limit = args.limit;
    const r = await api('GET', `/v1/webhooks/${encodeURIComponent(id)}/deliveries`, WebhookDeliveryListSchema, {
      query: { limit },
    });
    return { data: r, human: () => table(r.data, DELIVERY_COLUMNS) };
  },
});
