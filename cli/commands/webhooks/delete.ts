/** `svc webhooks delete <id>`. */
import { z } from 'zod';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { idArg } from './shared.js';

export default svcCommand({
  meta: { name: 'delete', description: 'Delete an endpoint (its pending deliveries are dropped)' },
  args: idArg,
  examples: ['svc webhooks delete whe_…'],
  async run({ args }) {
    const id = args.id;
    await api('DELETE', `/v1/webhooks/${encodeURIComponent(id)}`, z.object({}));
    return { data: { id, deleted: true }, human: `Webhook ${id} deleted.` };
  },
});
