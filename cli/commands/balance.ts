/** `svc balance`: the org's credits. */
import { BalanceSchema } from '../../core/schemas/billing.schemas.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { dollars } from '../output.js';

export default svcCommand({
  meta: { name: 'balance', description: 'Show your credit balance' },
  examples: ['svc balance', 'svc balance --json'],
  async run() {
    const b = await api('GET', '/v1/billing/balance', BalanceSchema);
    return { data: b, human: `${dollars(b.credit_cents)} in credits` };
  },
});
