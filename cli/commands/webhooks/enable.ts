/** `svc webhooks enable <id>`: an endpoint disabled after 3 days of failures, enabled again. */
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { WebhookEndpointSchema } from '../../../core/schemas/webhooks.schemas.js';
import { idArg } from './shared.js';

export default svcCommand({
  meta: { name: 'enable', description: 'Enable an endpoint again' },
  args: idArg,
  examples: ['svc webhooks enable whe_…'],
  async run({ args }) {
    const id = args.id;
    const r = await api('POST', `/v1/webhooks/${encodeURIComponent(id)}/enable`, WebhookEndpointSchema);
    return { data: r, human: `Webhook ${r.id} is ${r.status}.` };
  },
});
