/** `svc webhooks deliveries <id>`: the delivery log of an endpoint, newest first. */
import { api, withQuery } from '../../client.js';
import { str, svcCommand } from '../../command.js';
import { table } from '../../output.js';
import { WebhookDeliveryListSchema } from '../../../core/schemas/webhooks.schemas.js';
import { DELIVERY_COLUMNS, idArg } from './shared.js';

export default svcCommand({
  meta: { name: 'deliveries', description: 'Delivery log of an endpoint (status, attempts, last answer)' },
  args: { ...idArg, limit: { type: 'string', description: 'Rows (1-100, default 20)' } },
  examples: ['svc webhooks deliveries whe_… --limit 50'],
  async run({ args }) {
    const id = str(args, 'id') ?? '';
    const limit = str(args, 'limit');
    const r = WebhookDeliveryListSchema.parse(
      await api('GET', withQuery(`/v1/webhooks/${encodeURIComponent(id)}/deliveries`, { limit })),
    );
    return { data: r, human: () => table(r.data, DELIVERY_COLUMNS) };
  },
});
