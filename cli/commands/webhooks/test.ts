/** `svc webhooks test <id>`: queues a signed `webhook.test` event to this endpoint. */
import { z } from 'zod';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { idArg } from './shared.js';

export default svcCommand({
  meta: { name: 'test', description: 'Send a signed webhook.test event to an endpoint' },
  args: idArg,
  examples: ['svc webhooks test whe_…'],
  async run({ args }) {
    const id = args.id;
    const r = await api('POST', `/v1/webhooks/${encodeURIComponent(id)}/test`, z.object({ event_id: z.string() }));
    return { data: r, human: `Event ${r.event_id} queued. See how it went: svc webhooks deliveries ${id}` };
  },
});
