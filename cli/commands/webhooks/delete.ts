/** `svc webhooks delete <id>`. */
import { api } from '../../client.js';
import { str, svcCommand } from '../../command.js';
import { idArg } from './shared.js';

export default svcCommand({
  meta: { name: 'delete', description: 'Delete an endpoint (its pending deliveries are dropped)' },
  args: idArg,
  examples: ['svc webhooks delete whe_…'],
  async run({ args }) {
    const id = str(args, 'id') ?? '';
    await api('DELETE', `/v1/webhooks/${encodeURIComponent(id)}`);
    return { data: { id, deleted: true }, human: `Webhook ${id} deleted.` };
  },
});
