/** `svc balance`: the org's credits. */
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { dollars } from '../output.js';

export default svcCommand({
  meta: { name: 'balance', description: 'Show your credit balance' },
  examples: ['svc balance', 'svc balance --json'],
  async run() {
    const b = await api<{ credit_cents: number }>('GET', '/v1/billing/balance');
    return { data: b, human: `${dollars(b.credit_cents)} in credits` };
  },
});
