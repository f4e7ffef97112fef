/** `svc billing status`: GET /v1/billing/balance in full (credits, reservations, card, auto-reload). */
import { BalanceSchema } from '../../../core/schemas/billing.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { describe } from '../../output.js';

export default svcCommand({
  meta: { name: 'status', description: 'Balance, card on file and auto-reload settings' },
  examples: ['svc billing status'],
  async run() {
    const r = await api('GET', '/v1/billing/balance', BalanceSchema);
    return { data: r, human: () => describe(r) };
  },
});
