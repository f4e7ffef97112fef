/** `svc webhooks list`. */
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { table } from '../../output.js';
import { WebhookEndpointListSchema } from '../../../core/schemas/webhooks.schemas.js';
import { ENDPOINT_COLUMNS } from './shared.js';

export default svcCommand({
  meta: { name: 'list', description: "List the org's webhook endpoints" },
  examples: ['svc webhooks list --json'],
  async run() {
    const r = await api('GET', '/v1/webhooks', WebhookEndpointListSchema);
    return {
      data: r,
      human: () =>
        table(
          r.data.map((e) => ({ ...e, events: e.events.join(',') })),
          ENDPOINT_COLUMNS,
        ),
    };
  },
});
