/** `svc provider analytics`: gross volume, fees, earnings and payouts. */
import { ProviderAnalyticsSchema } from '../../../core/schemas/providers.schemas.js';
import { valueFlag } from '../../args.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { describe } from '../../output.js';

export default svcCommand({
  meta: { name: 'analytics', description: 'Your volume, earnings and payouts' },
  args: {
    from: valueFlag('date', 'Start (ISO date)'),
    to: valueFlag('date', 'End (ISO date)'),
  },
  examples: ['svc provider analytics --json'],
  async run({ args }) {
    const r = await api('GET', '/v1/provider/analytics', ProviderAnalyticsSchema, {
      query: { from: args.from, to: args.to },
    });
    return { data: r, human: () => describe(r) };
  },
});
