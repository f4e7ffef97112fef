/** `svc webhooks replay <delivery id>`: sends a delivery again now, with the same event id. */
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { WebhookDeliverySchema } from '../../../core/schemas/webhooks.schemas.js';

export default svcCommand({
  meta: { name: 'replay', description: 'Send a delivery again (same event id, so receivers can dedupe)' },
  args: { id: { type: 'positional', required: true, description: 'Delivery id (whd_…)' } },
  examples: ['svc webhooks replay whd_…'],
  async run({ args }) {
    const id = args.id;
    const r = await api('POST', `/v1/webhooks/deliveries/${encodeURIComponent(id)}/replay`, WebhookDeliverySchema);
    return { data: r, human: `Delivery ${r.id} queued again (event ${r.event_id}).` };
  },
});
