/** `svc billing packs`. */
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { table } from '../../output.js';

export default svcCommand({
  meta: { name: 'packs', description: 'Credit packs you can buy' },
  examples: ['svc billing packs'],
  async run() {
    const r = await api<{ data: Record<string, unknown>[] }>('GET', '/v1/billing/packs');
    return { data: r, human: () => table(r.data ?? [], ['id', 'name', 'price_cents', 'credit_cents']) };
  },
});
