/** `svc billing packs`. */
import { CreditPackListSchema } from '../../../core/schemas/billing.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { table } from '../../output.js';

export default svcCommand({
  meta: { name: 'packs', description: 'Credit packs you can buy' },
  examples: ['svc billing packs'],
  async run() {
    const r = await api('GET', '/v1/billing/packs', CreditPackListSchema);
    return { data: r, human: () => table(r.data, ['id', 'name', 'price_cents', 'credit_cents', 'bonus_cents']) };
  },
});
